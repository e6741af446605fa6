/* A program linked against the static library that calls only the public configuration calls:
 * every module's INGOT_* table must come with them (static_tables.sh checks the output). */
#include <ingot/config.h>
#include <stdio.h>

int main(void)
{
    return ingot_config_print(stdout, INGOT_CONFIG_PRINT_DOC | INGOT_CONFIG_PRINT_DEFAULT) ==
                   INGOT_OK
               ? 0
               : 1;
}
