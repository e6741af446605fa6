/*
 * Fuzz target: the INGOT_* value parser and the INGOT_FAULT spec parser. Input: one byte picks
 * a table variable, the rest is its value. A parsed value must format and re-parse to the same
 * canonical text; nothing may crash, overflow or leak.
 */
#include "runtime/base/config.h"
#include "runtime/base/fault.h"
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
    const ingot_config_field_t *f = &ingot_config_table[data[0] % ingot_config_table_size];
    ingot_config_t cfg, again;
    memset(&cfg, 0, sizeof(cfg));
    memset(&again, 0, sizeof(again));
    ingot_fault_validate(value, err, sizeof(err));
    if (ingot_config_parse(f, value, (char *)&cfg + f->offset, err, sizeof(err)) != INGOT_OK) {
        return 0;
    }
    ingot_config_format(f, (char *)&cfg + f->offset, text, sizeof(text));
    if (ingot_config_parse(f, text, (char *)&again + f->offset, err, sizeof(err)) != INGOT_OK) {
        abort(); /* a formatted value must parse */
    }
    ingot_config_format(f, (char *)&again + f->offset, text2, sizeof(text2));
    if (strcmp(text, text2) != 0) {
        abort(); /* formatting is canonical */
    }
    ingot_config_release(&cfg);
    ingot_config_release(&again);
    return 0;
}
