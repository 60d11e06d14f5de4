/* a.c - first unit: globals around "root", which the ALIGN variant aligns to a
 * line (as user_struct root_user was), and per-CPU counters. */
#include "rec.h"

struct user { atomic_t count; long pad[3]; char name[20]; };

int a_first = 1;
#ifdef ALIGN
struct user root ____cacheline_aligned_in_smp = { { 1 }, { 0 }, "root" };
#else
struct user root = { { 1 }, { 0 }, "root" };
#endif
long a_counter = 2;
char a_table[40] = { 3 };
static int a_state = 4;
DEFINE_PER_CPU(long, a_events);
DEFINE_PER_CPU(int, a_flags);
static DEFINE_PER_CPU(unsigned int, a_local);
DEFINE_PER_CPU_ALIGNED(long, a_hot_aligned);
long a_bss[6];

int a_fn(int cpu)
{
	return a_state + cpu + (int)a_bss[cpu % 6] + a_local;
}

void _start(void) { }
