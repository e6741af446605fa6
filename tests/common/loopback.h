/*
 * A loopback port for a client test: one where something listens and never answers, or one
 * where nothing listens (connections refused).
 */
#ifndef INGOT_TEST_LOOPBACK_H
#define INGOT_TEST_LOOPBACK_H

#include "test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* The port; *fd_p: the listening socket (the caller closes it), or -1 when nothing listens. */
static inline int test_loopback_port(int listening, int *fd_p)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    if (listening) {
        CHECK(listen(fd, 64) == 0);
    } else {
        close(fd); /* nothing listens there now */
        fd = -1;
    }
    *fd_p = fd;
    return ntohs(a.sin_port);
}

#endif
