/* b.c - the struct rec unit (as arch/x86/kernel/cpu/mce/core.c): per-CPU rec
 * instances, a static one that the PCPU variant defines DEFINE_PER_CPU_ALIGNED,
 * a global array of them and a holder. */
#include "rec.h"

DEFINE_PER_CPU(int, b_before);
#ifdef PCPU
static DEFINE_PER_CPU_ALIGNED(struct rec, seen);
#else
static DEFINE_PER_CPU(struct rec, seen);
#endif
DEFINE_PER_CPU(struct rec, inject);
DEFINE_PER_CPU(unsigned long, b_poll);
DEFINE_PER_CPU(unsigned int, b_count);
struct rec b_log[3] = { { .status = 1 } };
struct holder b_holder = { { 1 } };
int b_after = 5;
static char b_name[24] = "b";
struct rec b_spare;

long b_fn(int cpu)
{
	return seen.status + b_name[cpu] + b_spare.cpu;
}
