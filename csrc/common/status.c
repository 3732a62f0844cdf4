/* status.c -- stable codes and titles of dc_status (rows in status.def). */
#include "decido.h"

static const char *const status_codes[] = {
#define DC_STATUS(e, code, title) code,
#include "common/status.def"
#undef DC_STATUS
};

static const char *const status_titles[] = {
#define DC_STATUS(e, code, title) title,
#include "common/status.def"
#undef DC_STATUS
};

typedef char status_table_matches_enum[
    (sizeof status_codes / sizeof status_codes[0] == DC_STATUS_COUNT) ? 1 : -1];

const char *dc_status_code(dc_status status)
{
    if ((unsigned)status >= (unsigned)DC_STATUS_COUNT)
        return "unknown_status";
    return status_codes[status];
}

const char *dc_status_title(dc_status status)
{
    if ((unsigned)status >= (unsigned)DC_STATUS_COUNT)
        return "Unknown status";
    return status_titles[status];
}

const char *dc_version(void)
{
    return DC_VERSION;
}
