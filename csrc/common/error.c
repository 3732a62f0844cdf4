/* error.c -- dc_set_error (error.h). */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

dc_status dc_set_error(dc_error *err, dc_status status, size_t pos, size_t len,
                       const char *fmt, ...)
{
    va_list ap;
    if (!err)
        return status;
    err->status = status;
    err->position = pos;
    err->length = len;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}
