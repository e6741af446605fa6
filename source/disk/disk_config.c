/*
 * The disk tier's INGOT_* table: the folder (job-wide), the budget (per node), the piece size, the
 * policy and the prefetcher's share.
 */
#include "source/disk/disk_impl.h"
#include <stdio.h>
#include <string.h>

#define F(_field) offsetof(ingot_disk_config_t, _field)
#define JOB       INGOT_CONFIG_SCOPE_JOB
#define RANK      INGOT_CONFIG_SCOPE_RANK

#define DISK_PIECE_MIN_LOG2 12 /* 4 KiB */
#define DISK_PIECE_MAX_LOG2 26 /* 64 MiB */

const char *const ingot_disk_policy_names[] = {[INGOT_DISK_POLICY_CLAIRVOYANT] = "clairvoyant",
                                               [INGOT_DISK_POLICY_LRU] = "lru",
                                               [INGOT_DISK_POLICY_LRU + 1] = NULL};
const char *const ingot_disk_fill_names[] = {[INGOT_DISK_FILL_WHOLE] = "whole",
                                             [INGOT_DISK_FILL_PARTS] = "parts",
                                             [INGOT_DISK_FILL_PARTS + 1] = NULL};

static const ingot_config_field_t piece_size_field = {
    .name = "DISK_CACHE_PIECE", .dfl = "1MiB", .type = INGOT_CONFIG_SIZE, .max = INT64_MAX};

static int piece_parse(const char *spec, void *value, char *err, size_t errlen)
{
    uint64_t bytes = 0;
    char why[256];
    if (ingot_config_parse(&piece_size_field, spec, &bytes, why, sizeof(why)) == INGOT_OK) {
        for (uint32_t l = DISK_PIECE_MIN_LOG2; l <= DISK_PIECE_MAX_LOG2; l++) {
            if (bytes == 1ull << l) {
                *(uint32_t *)value = l;
                return 0;
            }
        }
    }
    snprintf(err, errlen, "not a power of two from 4KiB to 64MiB");
    return -1;
}

static void piece_format(const void *value, char *buf, size_t len)
{
    uint64_t bytes = 1ull << *(const uint32_t *)value;
    ingot_config_format(&piece_size_field, &bytes, buf, len);
}

static const ingot_config_codec_t piece_codec = {
    .parse = piece_parse,
    .format = piece_format,
    .syntax = "a power of two from 4KiB to 64MiB (e.g. 1MiB)",
    .size = sizeof(uint32_t)};

static const ingot_config_field_t disk_fields[] = {
    {"DISK_CACHE_DIR", "/var/tmp/ingot-cache-%u",
     "The node-local folder of the disk tier (%u: the user, %h: the host); made (mode 0700, "
     "its fan-out folders too, entries 0600) when missing. Entries outlive the job: a later job "
     "on the node reads what an earlier one wrote, whatever its manifest or size, since entries "
     "are named by content. The default is per user on /var/tmp, node-local on clusters and kept "
     "across reboots (unlike /tmp; not $XDG_CACHE_HOME, usually in a home folder on a filesystem "
     "shared between nodes). An existing folder is used only when it is a real folder (not a "
     "symbolic link) owned by the user and writable by no one else, its fan-out folders too "
     "(INGOT_DISK_CACHE_SHARED relaxes this for a group). A folder failing that, on NFS or "
     "another filesystem shared between nodes, read-only or missing is refused with one "
     "warning, and storage is read as without the tier.",
     JOB, INGOT_CONFIG_STRING, F(dir), 0, 0, NULL, NULL, NULL, NULL},
    {"DISK_CACHE_SHARED", "n",
     "Share the disk tier's folder with a group (y): a folder owned by another user is used when "
     "it is set-group-ID, writable by its group and that group is one of this user's (never a "
     "symbolic link, never writable by others); what the tier makes is its group's (folders "
     "2770, entries 0660). Everyone in the group can then read every entry, plant or replace "
     "entries (XXH3 finds damage, not forgery) and remove them: share only between users who "
     "trust each other. n: the folder must be this user's alone.",
     JOB, INGOT_CONFIG_BOOL, F(shared), 0, 0, NULL, NULL, NULL, NULL},
    {"DISK_CACHE_BYTES", "0",
     "The disk tier's budget on each node (0: no disk tier; else at least one entry, "
     "INGOT_DISK_CACHE_PIECE and its 4KiB header, refused at create otherwise). Each piece read "
     "from storage is written through to the node's disk (INGOT_DISK_CACHE_DIR) and read from "
     "there by this and later jobs. Every rank of a node must give the same value (ranks that differ are refused, "
     "named); nodes may differ. Jobs sharing a folder count one usage (its ledger): each keeps "
     "it within its own budget when it fills, so a job with a smaller budget evicts down to it "
     "as it fills and one with a larger budget fills up to its own. The budget in effect is at "
     "most what the folder's filesystem can hold (its free bytes and the folder's, less 5% of it, "
     "at most 64MiB), said once when smaller, and shrinks when the disk still says it is full.",
     RANK, INGOT_CONFIG_SIZE, F(bytes), 0, INT64_MAX, NULL, NULL, NULL, NULL},
    {"DISK_CACHE_PIECE", "1MiB",
     "Bytes of shard per disk-tier entry: aligned slices of a shard, named by the shard's "
     "content hash and the slice's index, so a second manifest holding the same shard finds "
     "them (INGOT_DISK_CACHE_FILL says how a missed one is made). Each 1/256 of it (at least 4KiB) carries "
     "its own hash, so a hit reads little more than it needs. Jobs share entries at the same "
     "piece size only.",
     JOB, INGOT_CONFIG_TYPED, F(piece_log2), 0, 0, NULL, NULL, &piece_codec, NULL},
    {"DISK_CACHE_POLICY", "clairvoyant",
     "How the disk tier admits and evicts: 'clairvoyant' (from the known order of every epoch: "
     "admit while there is room; when full, evict first what this job never reads again, then "
     "other jobs' entries oldest first, then the piece needed latest, and only for a newcomer "
     "needed sooner; Belady with bypass) or 'lru' (least recently used, always admitting: for "
     "comparison, the worst policy for epochs).",
     JOB, INGOT_CONFIG_ENUM, F(policy), 0, 0, ingot_disk_policy_names, NULL, NULL, NULL},
    {"DISK_CACHE_FILL", "whole",
     "How a missed piece gets its entry: 'whole' (the first miss reads the whole piece and "
     "writes it through: its other samples hit as soon as it is written, at the cost of the "
     "piece's bytes the miss did not need) or 'parts' (the misses read only their own samples "
     "from storage, as without the tier, and hand them to the piece's keeper, which writes the "
     "entry once every sample of the piece has come: each byte is read from storage once, but "
     "the entry serves only from then on; what a piece still misses when its uses of the epoch "
     "are past, the keeper reads itself; its bytes between samples are zeros, so a manifest "
     "laying the shard out otherwise reads it as a miss). docs/tiers.md compares them.",
     JOB, INGOT_CONFIG_ENUM, F(fill), 0, 0, ingot_disk_fill_names, NULL, NULL, NULL},
    {"DISK_PREFETCH", "25",
     "Percent of the time the disk tier's prefetcher (on one rank per node) may spend reading "
     "storage ahead of the loader, along the known order and within the budget (0: none). It "
     "starts a few steps past the loader's own reads and leaves the rest of the link to them.",
     JOB, INGOT_CONFIG_INT, F(prefetch), 0, 100, NULL, NULL, NULL, NULL},
};

_Static_assert(sizeof(ingot_disk_policy_kind_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_disk_fill_kind_t) == sizeof(int), "enum variables are stored as int");

INGOT_CONFIG_MODULE(ingot_disk, "disk", INGOT_CONFIG_ORDER_RUNTIME + 3, disk_fields,
                    ingot_disk_config_t, NULL)
