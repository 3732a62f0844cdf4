/* vm.h -- operand views and single-instruction execution (vm.c), shared
 * with the reverse sweep (ad.c) and the structure queries. */
#ifndef DC_VM_H
#define DC_VM_H

#include <stddef.h>

#include "expr/expr.h"

/* The kernels are also compiled for x86-64-v3 (AVX2) and x86-64-v4
 * (AVX-512), and the variant the CPU supports is picked at load time (GCC's
 * ifunc resolver).  Results are bit-identical: ISO C mode contracts no a*b+c
 * into FMA and nothing is reassociated. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(DECIDO_NO_CLONES) && !defined(__SANITIZE_ADDRESS__)
#define DC_KERNEL_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define DC_KERNEL_CLONES
#endif

typedef struct dc_view {
    const double *p;
    ptrdiff_t rs; /* row stride */
    ptrdiff_t es; /* element stride (0 broadcasts) */
} dc_view;

/* A reduction's running state (vm.c): 16 lanes as four vectors of 4 doubles
 * (GCC and Clang vector extensions: lane for lane the same IEEE operations
 * on SSE2, AVX2 and AVX-512).  A row's elements are fed in order, in blocks
 * that start at multiples of DC_ACC_LANES; element j goes to lane j mod 16. */
#define DC_ACC_LANES 16
typedef double dc_v4 __attribute__((vector_size(4 * sizeof(double))));
typedef struct dc_acc {
    dc_v4 v[4];
} dc_acc;

void dc_vm_view(const dc_program *p, const double *x, ptrdiff_t x_rs, const double *temps,
                size_t reg_size, dc_operand o, dc_view *v);
void dc_vm_exec(const dc_instr *in, double *D, ptrdiff_t R, const dc_view *ops);
double dc_vm_reduce_row(int op, const double *a, ptrdiff_t es, int64_t m);

#endif
