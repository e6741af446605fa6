/* INGOT_FAULT: syntax errors are named; nth, N+ and * select the right calls. */
#include "common/test.h"
#include "base/fault.h"
#include <errno.h>

static void bad(const char *spec, const char *why)
{
    char err[256] = "";
    CHECK_STATUS(ingot_fault_validate(spec, err, sizeof(err)), INGOT_ERR_CONFIG);
    CHECK_CONTAINS(err, why);
}

int main(void)
{
    char err[256];
    bad("bogus:1:fail", "unknown site 'bogus'");
    bad("mlock:0:fail", "bad call number '0'");
    bad("mlock:-1:fail", "bad call number");
    bad("mlock:x:fail", "bad call number 'x'");
    bad("mlock:1:EWHAT", "unknown action 'EWHAT'");
    bad("mlock:1:EWHAT", "EROFS, EDQUOT)"); /* the accepted actions are named, the last too */
    bad("mlock:1", "not site:nth:action");
    bad("mlock:1:fail:extra", "not site:nth:action");
    bad(",", "no rule");
    CHECK_OK(ingot_fault_validate("none", err, sizeof(err)));
    CHECK_OK(ingot_fault_validate("mlock:2:EIO,pread:3+:fail,malloc:*:ENOMEM", err, sizeof(err)));
    if (!INGOT_FAULT_ENABLED) {
        SKIP("fault sites not compiled in (configure with -DINGOT_FAULT_INJECTION=ON)");
    }
    CHECK_OK(ingot_fault_arm("mlock:2:EIO,pread:3+:fail,thread:*:EAGAIN,disk_write:2:EDQUOT", err,
                             sizeof(err)));
    CHECK(ingot_fault_check(INGOT_FAULT_MLOCK) == 0);
    CHECK(ingot_fault_check(INGOT_FAULT_MLOCK) == EIO);
    CHECK(ingot_fault_check(INGOT_FAULT_MLOCK) == 0);
    CHECK(ingot_fault_check(INGOT_FAULT_PREAD) == 0);
    CHECK(ingot_fault_check(INGOT_FAULT_PREAD) == 0);
    CHECK(ingot_fault_check(INGOT_FAULT_PREAD) == EIO);
    CHECK(ingot_fault_check(INGOT_FAULT_PREAD) == EIO);
    CHECK(ingot_fault_check(INGOT_FAULT_THREAD) == EAGAIN);
    CHECK(ingot_fault_check(INGOT_FAULT_MALLOC) == 0);
    CHECK(ingot_fault_check(INGOT_FAULT_DISK_WRITE) == 0);
    CHECK(ingot_fault_check(INGOT_FAULT_DISK_WRITE) == EDQUOT);
    CHECK(ingot_fault_check(INGOT_FAULT_DISK_WRITE) == 0);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    CHECK(ingot_fault_check(INGOT_FAULT_THREAD) == 0);
    return 0;
}
