# shellcheck shell=bash
# The disk tier's folders as the test scripts see them (sourced by bash scripts): whose a folder
# is, in the tier's words, and user nobody for the cases that need another user.

# whose PATH: its owner and mode as the tier says them ("owner uid 0 (root), mode 0700"); a
# symbolic link's own, not its target's
whose() {
    local name; name=$(stat -c %U "$1")
    [ "$name" = UNKNOWN ] && name="" || name=" ($name)"
    printf 'owner uid %s%s, mode %04d' "$(stat -c %u "$1")" "$name" "$(stat -c %a "$1")"
}

# need_nobody: exit 77 (skipped) unless this is root and user nobody (group nogroup) exists
need_nobody() {
    [ "$(id -u)" = 0 ] || { echo "skipped: running as another user needs root"; exit 77; }
    id -u nobody > /dev/null 2>&1 && getent group nogroup > /dev/null ||
        { echo "skipped: no user nobody, group nogroup"; exit 77; }
}

# as_nobody CMD...: CMD run as user nobody (group nogroup, no other group)
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
