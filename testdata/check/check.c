/*
 * check.c - fixtures for `layout-diff check`, cache-line groups and --hot.
 *
 * Not kernel code: a few types and variables named like the kernel's, built
 * three times by build.sh:
 *   base.elf     plain: root_user at +0x20 of its line after a 32-byte,
 *                64-aligned neighbour; struct mce is 120 bytes; the per-CPU
 *                pcpu_hot_count is alone on its line; struct netdev_like has
 *                groups tx_read (aligned) and rx.
 *   patched.elf  -DPATCHED: user_struct gets a zero-size ____cacheline_aligned
 *                first member and ____cacheline_aligned on the struct; mce
 *                gains kflags (128 bytes); pcpu_intruder lands on
 *                pcpu_hot_count's line; group rx gains rx_dropped (grows to
 *                two lines) and tx_read loses tx_flags.
 *   split.elf    -DPATCHED -DSPLIT: as patched, and sigpending starts its own
 *                line.
 */

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef unsigned long long __u64;

typedef struct { int counter; } atomic_t;
typedef struct { long counter; } atomic_long_t;
typedef struct { atomic_t refs; } refcount_t;
typedef struct { unsigned int val; } kuid_t;

struct hlist_node {
	struct hlist_node *next, **pprev;
};

#define ____cacheline_aligned __attribute__((aligned(64)))
#define __percpu_var __attribute__((section(".data..percpu"), used))
#define __cacheline_group_begin(G) __u8 __cacheline_group_begin__##G[0]
#define __cacheline_group_end(G) __u8 __cacheline_group_end__##G[0]
#define __cacheline_group_begin_aligned(G) \
	__cacheline_group_begin(G) ____cacheline_aligned

/* 1. struct mce: 120 bytes, 128 with PATCHED. */
struct mce {
	__u64 status;
	__u64 misc;
	__u64 addr;
	__u64 mcgstatus;
	__u64 ip;
	__u64 tsc;
	__u64 time;
	__u8 cpuvendor;
	__u8 inject_flags;
	__u8 severity;
	__u8 pad;
	__u32 cpuid;
	__u8 cs;
	__u8 bank;
	__u8 cpu;
	__u8 finished;
	__u32 extcpu;
	__u32 socketid;
	__u32 apicid;
	__u64 mcgcap;
	__u64 synd;
	__u64 ipid;
	__u64 ppin;
	__u32 microcode;
#ifdef PATCHED
	__u64 kflags;
#endif
};

/* 2. struct user_struct: the cacheline patch under review. */
struct user_struct {
#ifdef PATCHED
	__u8 __pad_start[0] ____cacheline_aligned;
#endif
	refcount_t __count;
#ifdef SPLIT
	atomic_t sigpending ____cacheline_aligned;
#else
	atomic_t sigpending;
#endif
	atomic_long_t pipe_bufs;
	unsigned long unix_inflight;
	struct hlist_node uidhash_node;
	kuid_t uid;
	atomic_long_t locked_vm;
}
#ifdef PATCHED
____cacheline_aligned
#endif
;

/* 3. A struct with cache-line groups (as net_device has since 6.8). */
struct netdev_like {
	__cacheline_group_begin_aligned(tx_read);
	void *tx_queue;
	unsigned long tx_bytes;
#ifndef PATCHED
	unsigned int tx_flags;
#endif
	__cacheline_group_end(tx_read);
	__cacheline_group_begin(rx);
	unsigned long rx_packets;
	unsigned long rx_bytes;
#ifdef PATCHED
	unsigned long rx_dropped[7];
#endif
	__cacheline_group_end(rx);
	int ifindex;
#ifdef PATCHED
	unsigned int tx_flags;
#endif
};

/* .data, in this order (-fno-toplevel-reorder). */
struct mce mce_last = { .status = 1 };
struct netdev_like loopback_dev = { .ifindex = 1 };

/* 32 bytes, 64-aligned: puts root_user at offset 0x20 of a line in base. */
__attribute__((aligned(64))) const char *types__ptrace[4] = {
	"long", "long", "unsigned long", "unsigned long",
};
struct user_struct root_user = { .__count = { { 1 } } };
unsigned long uidhash_lock = 1;

/* Per-CPU: pcpu_hot_count alone on its line, unless PATCHED inserts one. */
__percpu_var __attribute__((aligned(64))) unsigned long pcpu_hot_count;
#ifdef PATCHED
__percpu_var unsigned long pcpu_intruder;
#endif
__percpu_var __attribute__((aligned(64))) unsigned long pcpu_other[2];

/* Functions: hot_path 64-aligned, cold_path only 16-aligned after it. */
__attribute__((noinline, used, aligned(64))) void hot_path(void)
{
	__atomic_fetch_add(&root_user.__count.refs.counter, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&root_user.sigpending.counter, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline, used)) void cold_path(void)
{
	__atomic_fetch_add(&loopback_dev.rx_packets, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&mce_last.status, 1, __ATOMIC_RELAXED);
}

__attribute__((noreturn, used, noinline)) void _start(void)
{
	hot_path();
	cold_path();
	for (;;)
		;
}

/* A name longer than perf c2c's 30-character symbol column (after _start, so
 * nothing above moves). */
__attribute__((noinline, used)) void a_long_function_name_cut_by_perf_c2c(void)
{
	__atomic_fetch_add(&uidhash_lock, 1, __ATOMIC_RELAXED);
}
