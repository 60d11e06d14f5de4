/*
 * main.c - the testdata/evidence fixture, built three times by build.sh:
 *   old.elf         as is;
 *   new.elf         -DNEW: a known-hot, a declared-hot and a measured-hot object
 *                   each gain a written neighbour that is hot too; a known-hot
 *                   object gains a lock nothing says is hot (possible only); a
 *                   measured-hot member of struct msg_queue moves to another line;
 *                   a __read_mostly knob loses the attribute and lands beside
 *                   known-hot jiffies_64;
 *   cold.elf        -DCOLD: only grow_me grows, moving 100 cold objects (trace
 *                   formats) behind it.
 * FACTS.md holds nm's and readelf's view of all three.
 */
typedef struct { int counter; } atomic_t;
typedef struct { atomic_t val; } spinlock_t;

#define __aligned(n) __attribute__((aligned(n)))
#define __used __attribute__((used))
/* Each case has an input section of its own; evidence.lds starts each on a line. */
#define __in(s) __attribute__((used, section(".data." #s)))

/* Known hot (kernel/fork.c's nr_threads): alone after a 56-byte pad in OLD; in
 * NEW total_forks, the other per-fork counter, lands on its line. */
__in(known) char pad_a[48] = { 1 };
#ifdef NEW
__in(known) unsigned long total_forks = 0;
#endif
__in(known) int nr_threads = 1;

/* Known hot (pidmap_lock, taken for every pid) gains a lock nothing says is hot:
 * listed as possible, not flagged. */
__in(possible) char pad_p[56] = { 1 };
#ifdef NEW
__in(possible) spinlock_t evil_lock = { { 0 } };
#endif
__in(possible) spinlock_t pidmap_lock = { { 0 } };

/* Declared hot: a line-aligned object (____cacheline_aligned) alone on its line
 * in OLD; in NEW a known-hot counter (calc_load_tasks) shares it. */
__in(declared) long hot_stat[4] __aligned(64) = { 1 };
#ifdef NEW
__in(declared) atomic_t calc_load_tasks = { 2 };
#endif

/* Measured hot (perf-type.txt names `mstat`): after a pad in OLD; in NEW a
 * known-hot counter (tcp_memory_allocated) is placed before it on its line. */
__in(measured) char pad_m[48] = { 1 };
#ifdef NEW
__in(measured) atomic_t tcp_memory_allocated = { 3 };
#endif
__in(measured) long mstat = 4;

/* Measured-hot member: perf-type.txt samples msg_queue's tail (+0x38 in OLD).
 * NEW inserts two words before head, moving tail from line 0 to line 1. */
struct msg_queue {
	char name[48];
#ifdef NEW
	long extra[2];
#endif
	long head;
	long tail;
};
__in(member) struct msg_queue mq = { .name = "mq" };

/* Cold: grow_me grows by 8 bytes in COLD and moves the 100 trace formats after
 * it (print_fmt_*, what DEFINE_EVENT generates) across lines. */
#ifdef COLD
__in(cold) char grow_me[24] = { 1 };
#else
__in(cold) char grow_me[16] = { 1 };
#endif
#define FMT(n) __in(cold) char print_fmt_ev##n[20] = "\"x=%d\", REC->x";
#define FMT10(d) FMT(d##0) FMT(d##1) FMT(d##2) FMT(d##3) FMT(d##4) \
	FMT(d##5) FMT(d##6) FMT(d##7) FMT(d##8) FMT(d##9)
FMT10(0) FMT10(1) FMT10(2) FMT10(3) FMT10(4)
FMT10(5) FMT10(6) FMT10(7) FMT10(8) FMT10(9)

/* Read-mostly (__read_mostly): sysctl_rm_knob sits in .data..read_mostly in OLD,
 * where every neighbour is read-mostly too. NEW drops its __read_mostly, and it
 * lands in .data beside known-hot jiffies_64, written on every tick. */
#define __read_mostly __attribute__((used, section(".data..read_mostly")))
__in(rmlost) char pad_rm[48] = { 1 };
__in(rmlost) unsigned long jiffies_64 = 1;
#ifdef NEW
__in(rmlost) int sysctl_rm_knob = 5;
#else
int sysctl_rm_knob __read_mostly = 5;
#endif
int rm_other __read_mostly = 6;

__attribute__((noinline, used)) long start(void)
{
	return nr_threads + mstat + mq.tail + hot_stat[0] + pidmap_lock.val.counter;
}
