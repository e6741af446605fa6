/* Copies out of file mappings, SIGBUS turned into an error (see mapped.h). */
#include "base/mapped.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static struct sigaction mapped_old; /* the handler ours replaced */
static pthread_once_t mapped_once = PTHREAD_ONCE_INIT;
static _Thread_local sigjmp_buf mapped_env;
static _Thread_local volatile sig_atomic_t mapped_active; /* in a copy of this thread */

static void mapped_sigbus(int sig, siginfo_t *info, void *uc)
{
    if (mapped_active) {
        mapped_active = 0;
        siglongjmp(mapped_env, 1);
    }
    /* not ours: as the replaced handler would have it */
    if (mapped_old.sa_flags & SA_SIGINFO) {
        mapped_old.sa_sigaction(sig, info, uc);
    } else if (mapped_old.sa_handler != SIG_IGN && mapped_old.sa_handler != SIG_DFL) {
        mapped_old.sa_handler(sig);
    } else {
        signal(sig, SIG_DFL); /* the fault repeats on return, and the process ends as it would */
    }
}

static void mapped_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = mapped_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK; /* NODEFER: no mask to restore after */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &mapped_old);
}

int ingot_mapped_copy(void *dst, const void *src, size_t len)
{
    pthread_once(&mapped_once, mapped_install);
    if (sigsetjmp(mapped_env, 0) != 0) {
        return -1; /* a page past the file's end */
    }
    mapped_active = 1;
    memcpy(dst, src, len);
    mapped_active = 0;
    return 0;
}
