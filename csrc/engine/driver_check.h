/*
 * driver_check.h -- what a dc_run may ask (driver_check.c): validation before
 * anything is allocated, the engine's support, the options (the engine's own
 * and the run's).  Read by the driver (driver.c) and the studies (study.c).
 *
 * Nothing here is public: decido.h is the library's interface.
 */
#ifndef DC_DRIVER_CHECK_H
#define DC_DRIVER_CHECK_H

#include "engine/engine.h"

/* The run's own options (dc_run_options), beside the engine's. */
enum { RUN_OPT_STOP_ON_CONVERGENCE, N_RUN_OPTIONS };

dc_status dc_driver_validate(const dc_run *run, dc_error *err);
dc_status dc_driver_check_support(const dc_engine_vt *vt, const dc_run *run, dc_error *err);
dc_status dc_driver_read_options(const dc_engine_vt *vt, const dc_run *run, double *params,
                                 double *run_params, dc_error *err);

#endif
