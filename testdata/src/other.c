/*
 * other.c - a second compile unit linked into every fixture build.
 *
 * It exists to give the fixtures what a real vmlinux has in bulk:
 *  - a local symbol with the same name as one in kernel.c ("counter", both
 *    the variable and the helper function); only the STT_FILE symbol that
 *    precedes each one, or its DWARF unit, tells them apart;
 *  - a second copy of common types (list_head) in a second unit;
 *  - a struct with the same name as one in kernel.c ("stats") but another
 *    layout, which must be treated as a different type.
 */

typedef unsigned int u32;

struct list_head {
	struct list_head *next, *prev;
};

struct stats {
	u32 hits;
	u32 misses;
	u32 drops;
};

static __attribute__((used)) int counter = 20;

__attribute__((used)) struct stats net_stats = { 3, 4, 5 };
__attribute__((used)) struct list_head net_namespace_list = { &net_namespace_list, &net_namespace_list };

static __attribute__((noinline, used)) void counter_bump(void)
{
	*(volatile int *)&counter = counter + 2;
}

__attribute__((noinline, used)) int other_tick(void)
{
	counter_bump();
	*(volatile u32 *)&net_stats.hits = net_stats.hits + 1;
	return counter;
}
