/* c.c - a later unit whose objects move behind b.c's when struct rec grows,
 * with a cacheline-aligned global and a per-CPU neighbour of its own. */
#include "rec.h"

struct holder c_holder[2];
int c_ticks = 6;
struct holder c_one = { { 2 } };
long c_ptr __cacheline_aligned = 7;
short c_short = 8;
DEFINE_PER_CPU(long, c_runqueue_like);
DEFINE_PER_CPU(char, c_byte);
DEFINE_PER_CPU_ALIGNED(struct holder, c_aligned_holder);

long c_fn(int i)
{
	return c_holder[i & 1].count + c_one.count + c_ticks;
}
