/* error.h -- filling a dc_error, shared by the compiler, the driver and the
 * engines (error.c). */
#ifndef DC_ERROR_H
#define DC_ERROR_H

#include <stddef.h>

#include "decido.h"

/* Fill err (status, span, printf-style message); returns status.  err may be
 * NULL (then only the status is returned). */
dc_status dc_set_error(dc_error *err, dc_status status, size_t pos, size_t len,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

#endif
