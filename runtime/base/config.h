/*
 * The one INGOT_* configuration table (config_table.c) and its parser (config.c).
 *
 * Every variable: name (without the INGOT_ prefix), default (a string in the parser's syntax),
 * doc, scope (job-wide or per-rank), type with its bounds, and the offset of its parsed value in
 * ingot_config_t. The environment is parsed once per process into a struct; bad values are errors
 * naming the variable, the value and the accepted syntax. To add a variable: add a field to
 * ingot_config_t and a row to the table; ingot-info -c and the tests pick it up.
 */
#ifndef INGOT_BASE_CONFIG_H
#define INGOT_BASE_CONFIG_H

#include <ingot/status.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INGOT_ENV_PREFIX "INGOT_"

typedef enum ingot_config_type {
    INGOT_CONFIG_INT,      /**< int64_t; decimal integer within [min, max] */
    INGOT_CONFIG_SIZE,     /**< uint64_t bytes; "64MiB", "4k", "1.5GiB", "512" */
    INGOT_CONFIG_DURATION, /**< uint64_t ns; "250ms", "2s", "1.5m"; bare "0" allowed */
    INGOT_CONFIG_BOOL,     /**< bool; y/yes/on/true/1, n/no/off/false/0 */
    INGOT_CONFIG_ENUM,     /**< int index into enum_names; case-insensitive */
    INGOT_CONFIG_STRING    /**< char * (owned), validated by an optional check function */
} ingot_config_type_t;

typedef enum ingot_config_scope {
    INGOT_CONFIG_SCOPE_JOB,  /**< must be equal on every rank (checked at ingot_init) */
    INGOT_CONFIG_SCOPE_RANK  /**< may differ between ranks */
} ingot_config_scope_t;

/** Optional validator of a string variable: return 0, or write why into err and return -1. */
typedef int (*ingot_config_check_fn_t)(const char *value, char *err, size_t errlen);

typedef struct ingot_config_field {
    const char             *name;
    const char             *dfl;
    const char             *doc;
    ingot_config_scope_t    scope;
    ingot_config_type_t     type;
    size_t                  offset;
    int64_t                 min, max;     /* INT, SIZE and DURATION bounds (inclusive) */
    const char *const      *enum_names;   /* ENUM: NULL-terminated */
    ingot_config_check_fn_t check;        /* STRING: optional */
} ingot_config_field_t;

typedef enum { INGOT_MEM_PIN_AUTO, INGOT_MEM_PIN_OFF } ingot_config_pin_t;

/** Parsed values of every INGOT_* variable. */
typedef struct ingot_config {
    int      log_level;        /* ingot_log_level_t */
    char    *log_file;         /* "" = stderr */
    uint64_t timeout_ns;       /* deadline of every blocking wait */
    uint64_t spin_ns;          /* busy-wait before sleeping */
    bool     hugepages;
    int      pin;              /* ingot_config_pin_t */
    bool     check_job_config; /* compare job-wide variables at init */
    bool     warn_unknown;     /* warn about unknown INGOT_* variables */
    char    *fault;            /* fault-injection spec (test builds) */

    /* -- topology (topology/) -- */
    char    *topology_xml;     /* "none" = live hwloc discovery */
    int      placement;        /* ingot_topo_mode_t: auto, gpu, cpu */
    char    *gpus;             /* explicit GPU list, "all" */
    int      gpu_sharing;      /* ingot_topo_sharing_t: error, share */
    int64_t  ingest_cores;     /* cores per rank reserved for ingest threads */
    int      bind;             /* ingot_topo_bind_mode_t: none, cpu, cpu+mem */

    /* -- shard (shard/) -- */

    /* -- loader (runtime/) -- */
    char    *storage_emulate;  /* "none" or "bw=200MiB/s,lat=5ms" */
    char    *trace;            /* "none" or a Chrome-trace path pattern */
    int64_t  readers;          /* storage reader threads per loader (0: auto) */
    int64_t  workers;          /* verify/decode/collate threads per loader (0: auto) */
    uint64_t loader_memory;    /* default memory budget of a loader */
    bool     direct_io;        /* O_DIRECT shard reads */
    int      verify;           /* ingot_verify_policy_t */
    int64_t  skip_budget;      /* corrupt samples skipped per epoch before failing */
    uint64_t coalesce_gap;     /* largest gap between samples read in one request */
} ingot_config_t;

extern const ingot_config_field_t ingot_config_table[];
extern const size_t               ingot_config_table_size;

/** Environment lookup used by the reader (getenv by default; tests pass their own). */
typedef const char *(*ingot_config_lookup_fn_t)(const char *full_name, void *arg);

/**
 * Parse every variable from @p lookup (NULL: getenv) into @p cfg. On error, @p err holds
 * "INGOT_X='value': why (accepted: syntax)" and @p cfg is left released.
 */
ingot_status_t ingot_config_read(ingot_config_t *cfg, ingot_config_lookup_fn_t lookup, void *arg,
                                 char *err, size_t errlen);
void           ingot_config_release(ingot_config_t *cfg);

/** Parse one value for one field into @p value_p (a pointer to the field's storage). */
ingot_status_t ingot_config_parse(const ingot_config_field_t *field, const char *str,
                                  void *value_p, char *err, size_t errlen);
/** Format a parsed value in the parser's syntax (canonical: equal values format equally). */
void           ingot_config_format(const ingot_config_field_t *field, const void *value_p,
                                   char *buf, size_t buflen);
const ingot_config_field_t *ingot_config_find(const char *name);
const char    *ingot_config_syntax(const ingot_config_field_t *field, char *buf, size_t buflen);
const char    *ingot_config_scope_name(ingot_config_scope_t scope);

/**
 * The process-wide configuration, parsed from the environment at the first call (thread-safe);
 * applies logging, spin and fault settings and warns about unknown INGOT_* variables. Every
 * later call returns the same status. On error, @p cfg_p is untouched.
 */
ingot_status_t ingot_config_global(const ingot_config_t **cfg_p);

/** Closest known variable name to @p name (edit distance), or NULL if none is close. */
const char    *ingot_config_suggest(const char *name);

/*
 * Validators of module-specific strings, defined by the modules themselves (the table only
 * refers to them; base never includes a module header).
 */
int ingot_config_check_storage_emulate(const char *value, char *err, size_t errlen); /* runtime/storage.c */

/** Warn (once per name) about INGOT_* variables in @p envp that are not in the table. */
void           ingot_config_warn_unknown(char **envp);

#endif
