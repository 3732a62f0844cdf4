/* resolve.h -- name resolution and lowering of a syntax tree (resolve.c). */
#ifndef DC_RESOLVE_H
#define DC_RESOLVE_H

#include "expr/builder.h"

/* Resolve every node of ast and lower it through the builder; the root
 * becomes the program's result (it must be a scalar). */
dc_status dc_build_lower(dc_builder *b, const dc_ast *ast, const dc_options *opt,
                         const char *text, dc_error *err);

/* Keywords and built-in function names cannot be variables. */
int dc_reserved_name(const char *s);

#endif
