/*
 * data.c - the data of the testdata/suggest fixture (see README.md), built plain
 * (old.elf) and with -DNEW (new.elf):
 *   - nr_threads and total_forks (both known hot) share a line in both builds:
 *     not a change, but a one-image `suggest --hot`/`--rules` finds it;
 *   - sysctl_x sits +8 into its line in both builds (a failing `aligned` rule);
 *   - rm_lost is __read_mostly in OLD, last of this unit's read-mostly data; NEW
 *     drops the attribute and it lands beside known-hot jiffies_64; FIX_RM puts it
 *     back on NEW's definition, which comes before rm_other's;
 *   - struct sk_like gains `added[2]` before group rx_hot, which then crosses a
 *     line (1 -> 2 lines), and group tx_hot (line-aligned) outgrows its one line
 *     (+tx_extra, tx_flags 4 -> 8 B); FIX_GROUP aligns rx_hot's start, FIX_TX
 *     declares tx_flags after tx_hot's end.
 */
typedef unsigned char __u8;

#define ____cacheline_aligned __attribute__((aligned(64)))
#define __in(s) __attribute__((used, section(".data." #s)))
#define __read_mostly __attribute__((used, section(".data..read_mostly")))
#define __cacheline_group_begin(G) __u8 __cacheline_group_begin__##G[0]
#define __cacheline_group_end(G) __u8 __cacheline_group_end__##G[0]
#define __cacheline_group_begin_aligned(G) \
	__cacheline_group_begin(G) ____cacheline_aligned

__in(pair) unsigned long total_forks = 1;
__in(pair) int nr_threads = 1;

__in(align) long pad_x __attribute__((aligned(64))) = 1;
__in(align) long sysctl_x = 2;

__in(rmlost) char pad_rm[48] __attribute__((aligned(64))) = { 1 };
__in(rmlost) unsigned long jiffies_64 = 1;
#if defined(NEW) && defined(FIX_RM)
int rm_lost __read_mostly = 5;
#elif defined(NEW)
__in(rmlost) int rm_lost = 5;
#endif
int rm_other __read_mostly = 6;
#ifndef NEW
int rm_lost __read_mostly = 5;
#endif

struct sk_like {
	long a;
	long b;
#ifdef NEW
	long added[2];
#endif
#ifdef FIX_GROUP
	__cacheline_group_begin_aligned(rx_hot);
#else
	__cacheline_group_begin(rx_hot);
#endif
	long rx1;
	long rx2;
	long rx3;
	long rx4;
	long rx5;
	__cacheline_group_end(rx_hot);
	__cacheline_group_begin_aligned(tx_hot);
	long tx1;
	long tx2;
	long tx3;
	long tx4;
	long tx5;
	long tx6;
#if defined(NEW) && !defined(FIX_TX)
	long tx_flags;
#endif
#ifdef NEW
	long tx_extra[2];
#else
	int tx_flags;
#endif
	__cacheline_group_end(tx_hot);
#ifdef FIX_TX
	long tx_flags;
#endif
};

struct sk_like sk0;

long read_data(void)
{
	return nr_threads + total_forks + sysctl_x + jiffies_64 + rm_lost + rm_other +
	       sk0.rx1 + sk0.tx1;
}
