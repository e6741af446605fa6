/*
 * Fuzz target: the INGOT_* value parser and the INGOT_FAULT spec parser. Input: one byte picks
 * a table variable, the rest is its value. A parsed value must format and re-parse to the same
 * canonical text; nothing may crash, overflow or leak.
 */
#include "base/config.h"
#include "base/fault.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_VALUE_MAX 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_VALUE_MAX) {
        return 0;
    }
    char value[FUZZ_VALUE_MAX + 1], err[512], text[FUZZ_VALUE_MAX + 64], text2[sizeof(text)];
    memcpy(value, data + 1, size - 1);
    value[size - 1] = '\0';
    size_t nfields = 0, pick = 0;
    for (size_t t = 0; t < ingot_config_table_count(); t++) {
        nfields += ingot_config_table_at(t)->count;
    }
    const ingot_config_field_t *f = NULL;
    pick = data[0] % nfields;
    for (size_t t = 0; f == NULL; t++) {
        const ingot_config_table_t *tab = ingot_config_table_at(t);
        if (pick < tab->count) {
            f = &tab->fields[pick];
        } else {
            pick -= tab->count;
        }
    }
    /* one value: a pointer, 64 bits, or a typed field's struct (its codec says how large) */
    _Alignas(16) char cfg[1024], again[1024];
    if (f->type == INGOT_CONFIG_TYPED && f->codec->size > sizeof(cfg)) {
        abort(); /* a codec without its size, or one this target cannot hold: make the room */
    }
    memset(&cfg, 0, sizeof(cfg));
    memset(&again, 0, sizeof(again));
    ingot_fault_validate(value, err, sizeof(err));
    if (ingot_config_parse(f, value, cfg, err, sizeof(err)) != INGOT_OK) {
        return 0;
    }
    ingot_config_format(f, cfg, text, sizeof(text));
    if (ingot_config_parse(f, text, again, err, sizeof(err)) != INGOT_OK) {
        abort(); /* a formatted value must parse */
    }
    ingot_config_format(f, again, text2, sizeof(text2));
    if (strcmp(text, text2) != 0) {
        abort(); /* formatting is canonical */
    }
    if (f->type == INGOT_CONFIG_STRING) {
        free(*(char **)cfg);
        free(*(char **)again);
    }
    return 0;
}
