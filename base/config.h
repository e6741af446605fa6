/*
 * The INGOT_* parser and the registry of the modules' tables (config.c).
 *
 * Every variable: name (without the INGOT_ prefix), default (a string in the parser's syntax),
 * doc, scope (job-wide or per-rank), type with its bounds, and the offset of its parsed value in
 * its module's values struct. Each module owns a table (base's is base_config.c); the environment
 * is parsed once per process into every table's struct; bad values are errors naming the
 * variable, the value and the accepted syntax. To add a variable: add a field to the module's
 * struct and a row to its table; ingot-info -c, the job-wide check and the tests pick it up.
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
    INGOT_CONFIG_ENUM,     /**< int index into enum_names; case-insensitive. The names are
                                defined with designated initializers indexed by the module's
                                enum ([INGOT_X_AUTO] = "auto"), so the index is the enum value */
    INGOT_CONFIG_STRING,   /**< char * (owned), validated by an optional check function */
    INGOT_CONFIG_TYPED     /**< a module's own type (a budget, an order, a link's shape), parsed
                                once by the field's codec into its typed storage, so no module
                                parses a value again where it uses it */
} ingot_config_type_t;

typedef enum ingot_config_scope {
    INGOT_CONFIG_SCOPE_JOB, /**< must be equal on every rank (checked at ingot_init) */
    INGOT_CONFIG_SCOPE_RANK /**< may differ between ranks */
} ingot_config_scope_t;

/** Optional validator of a string variable: return 0, or write why into err and return -1.
 *  Called with @p value NULL, it may write what it accepts into err (the syntax shown by
 *  messages and ingot-info -c; "a string" otherwise) and return 0. */
typedef int (*ingot_config_check_fn_t)(const char *value, char *err, size_t errlen);

/** How a TYPED variable is parsed into its storage and printed back. */
typedef struct ingot_config_codec {
    /** Parse @p str into @p value (the field's storage): 0, or -1 with why in @p err. */
    int (*parse)(const char *str, void *value, char *err, size_t errlen);
    /** @p value in the parser's syntax (canonical: equal values format equally). */
    void (*format)(const void *value, char *buf, size_t buflen);
    /** What it accepts, for messages and ingot-info -c. */
    const char *syntax;
    /** Bytes of the value parse writes (sizeof its type): a caller's storage holds that much. */
    size_t size;
} ingot_config_codec_t;

typedef struct ingot_config_field {
    const char *name;
    const char *dfl;
    const char *doc;
    ingot_config_scope_t scope;
    ingot_config_type_t type;
    size_t offset;
    int64_t min, max;                  /* INT, SIZE and DURATION bounds (inclusive) */
    const char *const *enum_names;     /* ENUM: NULL-terminated */
    ingot_config_check_fn_t check;     /* STRING: optional */
    const ingot_config_codec_t *codec; /* TYPED */
    /** The variable's former name, still read (with a deprecation line) when the new one is
     *  unset; NULL when it never had another. */
    const char *old_name;
} ingot_config_field_t;

/**
 * One module's variables and the struct their parsed values go into. A module defines its table
 * and its values struct in one file, next to the enums its variables name, and registers the
 * table with INGOT_CONFIG_REGISTER (a constructor, as UCX registers one table per component).
 * Tables are kept in @p order (the layer order: base first), which is the order of ingot-info -c.
 */
typedef struct ingot_config_table {
    const char *module; /**< section name: "base", "topology", "loader", ... */
    int order;          /**< position among the tables (lower first) */
    const ingot_config_field_t *fields;
    size_t count;
    size_t size;  /**< sizeof the module's values struct */
    void *values; /**< the process-wide parsed values (module storage) */
    /** Optional: applied once to the process-wide values after every table parsed (base sets
     *  its log level, spin and faults here); a failure fails the load. */
    ingot_status_t (*apply)(const void *values);
} ingot_config_table_t;

#define INGOT_CONFIG_FIELDS(_fields) (_fields), (sizeof(_fields) / sizeof((_fields)[0]))

/**
 * Define a module's table: its values struct (@p _type), the table `<_prefix>_config_table`
 * over @p _fields, its registration, and the typed accessor `<_prefix>_config(const _type **)`.
 * @p _apply may be NULL.
 */
#define INGOT_CONFIG_MODULE(_prefix, _module, _order, _fields, _type, _apply) \
    static _type _prefix##_values; \
    ingot_config_table_t _prefix##_config_table = { \
        _module, _order, INGOT_CONFIG_FIELDS(_fields), sizeof(_type), &_prefix##_values, _apply}; \
    INGOT_CONFIG_REGISTER(_prefix##_config_table) \
    ingot_status_t _prefix##_config(const _type **cfg_p) \
    { \
        return ingot_config_values(&_prefix##_config_table, (const void **)cfg_p); \
    }

/** Register @p _table (an ingot_config_table_t) when the library is loaded. */
#define INGOT_CONFIG_REGISTER(_table) \
    __attribute__((constructor)) static void ingot_config_register_##_table(void) \
    { \
        ingot_config_register(&(_table)); \
    }

/** Order of the layers' tables. */
enum {
    INGOT_CONFIG_ORDER_BASE = 0,
    INGOT_CONFIG_ORDER_TOPOLOGY = 10,
    INGOT_CONFIG_ORDER_SHARD = 20,
    INGOT_CONFIG_ORDER_COLLECTIVES = 30,
    INGOT_CONFIG_ORDER_RUNTIME = 40
};

/** Add @p table to the registry (constructors only: not thread-safe against a running load). */
void ingot_config_register(ingot_config_table_t *table);

/** Registered tables, in order: ingot_config_table_at(0..ingot_config_table_count()-1). */
size_t ingot_config_table_count(void);
const ingot_config_table_t *ingot_config_table_at(size_t i);

/** Environment lookup used by the reader (getenv by default; tests pass their own). */
typedef const char *(*ingot_config_lookup_fn_t)(const char *full_name, void *arg);

/**
 * Parse every variable of @p table from @p lookup (NULL: getenv) into @p values (a struct of
 * table->size bytes). On error, @p err holds "INGOT_X='value': why (accepted: syntax)" and
 * @p values is left released.
 */
ingot_status_t ingot_config_table_read(const ingot_config_table_t *table, void *values,
                                       ingot_config_lookup_fn_t lookup, void *arg, char *err,
                                       size_t errlen);
/** Free the strings of @p values (parsed from @p table) and zero them. */
void ingot_config_table_release(const ingot_config_table_t *table, void *values);

/** Parse one value for one field into @p value_p (a pointer to the field's storage). */
ingot_status_t ingot_config_parse(const ingot_config_field_t *field, const char *str, void *value_p,
                                  char *err, size_t errlen);
/** Format a parsed value in the parser's syntax (canonical: equal values format equally). */
void ingot_config_format(const ingot_config_field_t *field, const void *value_p, char *buf,
                         size_t buflen);
/**
 * Parse "SIZE" or "SIZE" followed by @p per (e.g. "64GiB/node") with @p size_field's size syntax
 * (a typed field's codec shares it so): the bytes in @p bytes_p, whether @p per was written in
 * @p per_p. Returns 0, or -1 when @p str is neither (nothing written).
 */
int ingot_config_parse_size_per(const ingot_config_field_t *size_field, const char *per,
                                const char *str, uint64_t *bytes_p, bool *per_p);
/** Format what ingot_config_parse_size_per() parses (@p per appended when @p per_given). */
void ingot_config_format_size_per(const ingot_config_field_t *size_field, const char *per,
                                  uint64_t bytes, bool per_given, char *buf, size_t buflen);
/** The variable @p name (with or without INGOT_), and its table in @p table_p (may be NULL). */
const ingot_config_field_t *ingot_config_find(const char *name,
                                              const ingot_config_table_t **table_p);
const char *ingot_config_syntax(const ingot_config_field_t *field, char *buf, size_t buflen);
const char *ingot_config_scope_name(ingot_config_scope_t scope);

/**
 * The process-wide configuration: every registered table parsed from the environment at the
 * first call (thread-safe), then base's settings applied (logging, spin, faults) and unknown
 * INGOT_* variables warned about. Every later call returns the same status.
 */
ingot_status_t ingot_config_load(void);

/**
 * The process-wide parsed values of @p table (ingot_config_load() first). On error, @p values_p
 * is untouched. Modules wrap this in a typed accessor (ingot_base_config(), ...).
 */
ingot_status_t ingot_config_values(const ingot_config_table_t *table, const void **values_p);

/** Closest known variable name to @p name (edit distance), or NULL if none is close. */
const char *ingot_config_suggest(const char *name);

/** Warn (once per name) about INGOT_* variables in @p envp that are not in the table. */
void ingot_config_warn_unknown(char **envp);

#endif
