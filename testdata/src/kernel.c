/*
 * kernel.c - a miniature "vmlinux" for layout-diff's tests.
 *
 * This is not kernel code.  It declares a handful of types and variables
 * whose names, sizes and placement imitate an x86_64 Linux 6.1 build, so
 * that the layout cases layout-diff must handle (per-CPU variables linked
 * at 0, a struct that grows, a struct that becomes cacheline aligned,
 * bitfields, anonymous members, flexible arrays, function alignment) show
 * up in a file small enough to commit.
 *
 * Built twice by ../build.sh: plain (the OLD build) and with -DNEW.
 * Every difference between the two builds is behind "#ifdef NEW".
 *
 * Freestanding: no libc, no headers, our own _start.
 */

/* ------------------------------------------------------------------ */
/* Basic types (spelled like the kernel's so DWARF names look familiar) */

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed int __s32;
typedef signed long long __s64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef _Bool bool;
typedef int pid_t;

typedef struct { int counter; } atomic_t;
typedef struct { long counter; } atomic_long_t;
typedef struct { atomic_t refs; } refcount_t;
typedef struct { unsigned int val; } kuid_t;
typedef struct { volatile unsigned int lock; } raw_spinlock_t;
typedef struct { unsigned int sequence; } seqcount_t;

struct list_head {
	struct list_head *next, *prev;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};

/* ------------------------------------------------------------------ */
/* Placement macros, defined here the way the kernel's headers do it.  */

#define L1_CACHE_BYTES 64
#define PAGE_SIZE 4096

#define __percpu_section __attribute__((section(".data..percpu")))

#define PER_CPU_IN(sec) __attribute__((section(".data..percpu" sec), used))

#define DEFINE_PER_CPU(type, name) \
	__percpu_section __attribute__((used)) __typeof__(type) name
#define DEFINE_PER_CPU_FIRST(type, name) \
	PER_CPU_IN("..first") __typeof__(type) name
#define DEFINE_PER_CPU_PAGE_ALIGNED(type, name) \
	PER_CPU_IN("..page_aligned") __attribute__((aligned(PAGE_SIZE))) \
	__typeof__(type) name
#define DEFINE_PER_CPU_READ_MOSTLY(type, name) \
	PER_CPU_IN("..read_mostly") __typeof__(type) name
#define DEFINE_PER_CPU_ALIGNED(type, name) \
	PER_CPU_IN("..shared_aligned") __attribute__((aligned(L1_CACHE_BYTES))) \
	__typeof__(type) name

#define __read_mostly __attribute__((section(".data..read_mostly"), used))
#define ____cacheline_aligned __attribute__((aligned(L1_CACHE_BYTES)))
#define __cacheline_aligned \
	__attribute__((aligned(L1_CACHE_BYTES), section(".data..cacheline_aligned"), used))

#define __used __attribute__((used))
#define __hot_fn __attribute__((noinline, used))

#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

/* ------------------------------------------------------------------ */
/* 1. struct mce: 120 bytes in OLD, 128 in NEW (kflags appended).      */

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
#ifdef NEW
	__u64 kflags;
#endif
};

struct tsc_adjust {
	s64 bootval;
	s64 adjusted;
	unsigned long nextcheck;
	bool warned;
};

struct fixed_percpu_data {
	char gs_base[40];
	unsigned long stack_canary;
};

struct desc_struct {
	u16 limit0;
	u16 base0;
	u16 base1_flags;
	u16 limit1_base2;
};

struct gdt_page {
	struct desc_struct gdt[16];
};

/* A cut-down run queue, placed with DEFINE_PER_CPU_ALIGNED. */
struct rq {
	raw_spinlock_t __lock;
	unsigned int nr_running;
	unsigned long nr_switches;
	u64 clock;
	u64 clock_task;
	struct list_head cfs_tasks;
	void *curr;
	void *idle;
	atomic_t nr_iowait;
	int cpu;
	int online;
	unsigned long next_balance;
	u64 avg_idle;
	u64 max_idle_balance_cost;
	struct rcu_head rcu;
	unsigned int nr_uninterruptible;
	unsigned int ttwu_pending;
};

struct tlb_state {
	void *loaded_mm;
	u16 loaded_mm_asid;
	u16 next_asid;
	bool invalidate_other;
	unsigned short user_pcid_flush_mask;
	unsigned long cr4;
};

/* ---- per-CPU area ------------------------------------------------- */
/* ..first */
DEFINE_PER_CPU_FIRST(struct fixed_percpu_data, fixed_percpu_data);

/* ..page_aligned */
DEFINE_PER_CPU_PAGE_ALIGNED(struct gdt_page, gdt_page) = {
	.gdt = { [1] = { 0xffff, 0, 0x9b00, 0xaf } },
};

/* ..read_mostly */
DEFINE_PER_CPU_READ_MOSTLY(int, cpu_number);
DEFINE_PER_CPU_READ_MOSTLY(unsigned long, this_cpu_off);

/* plain per-CPU, in definition order (-fno-toplevel-reorder) */
DEFINE_PER_CPU(int, __preempt_count) = 1;
DEFINE_PER_CPU(unsigned long, cpu_current_top_of_stack);
DEFINE_PER_CPU(void *, current_task);
DEFINE_PER_CPU(struct mce, mces_seen);
DEFINE_PER_CPU(struct mce, injectm);
DEFINE_PER_CPU(unsigned int, mce_exception_count);
DEFINE_PER_CPU(unsigned int, mce_poll_count);
DEFINE_PER_CPU(struct tsc_adjust, tsc_adjust);
DEFINE_PER_CPU(unsigned long, arch_freq_scale) = 1024;
#ifdef NEW
/* 3. a per-CPU variable that only the NEW build has */
DEFINE_PER_CPU(int, vclock_new_counter);
#endif
DEFINE_PER_CPU(int, xen_vcpu_id);
DEFINE_PER_CPU(unsigned long, process_counts);
DEFINE_PER_CPU(void *, irq_regs);
DEFINE_PER_CPU(u64, hardirq_stack_ptr);

/* ..shared_aligned (DEFINE_PER_CPU_ALIGNED) */
DEFINE_PER_CPU_ALIGNED(struct rq, runqueues);
DEFINE_PER_CPU_ALIGNED(struct tlb_state, cpu_tlbstate);

/* ------------------------------------------------------------------ */
/* 2. struct user_struct and root_user                                  */

struct percpu_counter {
	raw_spinlock_t lock;
	s64 count;
	struct list_head list;
	s32 *counters;
};

struct ratelimit_state {
	raw_spinlock_t lock;
	int interval;
	int burst;
	int printed;
	int missed;
	unsigned long begin;
	unsigned long flags;
};

/* 136 bytes in OLD (two 4-byte holes); 192 in NEW (cacheline aligned). */
struct user_struct {
	refcount_t __count;
	struct percpu_counter epoll_watches;
	unsigned long unix_inflight;
	atomic_long_t pipe_bufs;
	struct hlist_node uidhash_node;
	kuid_t uid;
	atomic_long_t locked_vm;
	struct ratelimit_state ratelimit;
}
#ifdef NEW
____cacheline_aligned
#endif
;

struct user_namespace {
	unsigned int uid_map_nr_extents;
	unsigned int gid_map_nr_extents;
	atomic_t ns_count;
	int level;
	kuid_t owner;
	unsigned long flags;
	struct user_namespace *parent;
	struct user_struct *creator;
	struct rcu_head rcu;
	long ucount_max[8];
};

/* ------------------------------------------------------------------ */
/* 5. __cacheline_aligned and __read_mostly globals                     */

typedef struct {
	seqcount_t seqcount;
	raw_spinlock_t lock;
} seqlock_t;

__cacheline_aligned seqlock_t jiffies_lock = { { 0 }, { 0 } };
__cacheline_aligned struct { raw_spinlock_t lock; unsigned long ticks; } tick_broadcast_state = { { 0 }, 1 };

__read_mostly int sysctl_sched_rt_runtime = 950000;
__read_mostly unsigned int sysctl_sched_latency = 6000000;
__read_mostly unsigned long tick_nsec = 4000000;
__read_mostly int panic_on_oops = 1;
__read_mostly void *mem_section_root = (void *)0;
__read_mostly unsigned long __per_cpu_offset_boot[4] = { 0x1000, 0x2000, 0x3000, 0x4000 };

/* ------------------------------------------------------------------ */
/* 6. Layout shapes: bitfields, anonymous members, flexible arrays      */

/* A task_struct in miniature: a 4-byte hole, two bitfield groups split by
 * ":0" (leaving a bit hole), a bitfield pushed into a new unit because it
 * does not fit in the rest of the current one, and one whose bits cross a
 * byte boundary.  NEW adds kstack_offset and a bitfield, shifting every
 * member after prio and growing the struct from 88 to 96 bytes. */
struct task_struct {
	unsigned long thread_flags;
	unsigned int __state;
	void *stack;
	refcount_t usage;
	unsigned int flags;
	int on_cpu;
	int prio;
#ifdef NEW
	u32 kstack_offset;
#endif
	unsigned sched_reset_on_fork:1;
	unsigned sched_contributes_to_load:1;
	unsigned sched_migrated:1;
#ifdef NEW
	unsigned sched_task_hot:1;
#endif
	unsigned :0;
	unsigned sched_remote_wakeup:1;
	unsigned in_execve:1;
	unsigned in_iowait:1;
	unsigned int jobctl_pending:20;
	unsigned int restart_flags:20;
	unsigned char brk_randomized:3;
	unsigned short in_lru_fault:7;
	int exit_code;
	unsigned long atomic_flags;
	pid_t pid;
	pid_t tgid;
	char comm[16];
};

/* A page in miniature: anonymous union holding anonymous structs. */
struct page {
	unsigned long flags;
	union {
		struct {
			struct list_head lru;
			void *mapping;
			unsigned long index;
			unsigned long private;
		};
		struct {
			unsigned long pp_magic;
			void *pp;
			unsigned long _pp_mapping_pad;
			unsigned long dma_addr;
		};
		struct rcu_head rcu_head;
	};
	union {
		atomic_t _mapcount;
		unsigned int page_type;
	};
	atomic_t _refcount;
	unsigned long memcg_data;
};

/* Flexible array member, and an instance whose initializer fills it
 * (a GNU extension: the symbol is larger than sizeof the type). */
struct ring_buffer_event {
	u32 type_len:5, time_delta:27;
	u32 array[];
};

/* Zero-length arrays used as markers, the pre-C99 kernel idiom. */
struct sk_buff {
	struct sk_buff *next;
	struct sk_buff *prev;
	unsigned int len;
	unsigned int data_len;
	__u32 headers_start[0];
	__u8 pkt_type:3;
	__u8 ignore_df:1;
	__u8 nf_trace:1;
	__u16 protocol;
	__u32 priority;
	__u32 headers_end[0];
	unsigned char *head;
	unsigned char cb[0];
};

/* A 4-byte hole after flags and 6 bytes of tail padding. */
struct timer_list {
	struct hlist_node entry;
	u32 flags;
	unsigned long expires;
	void (*function)(struct timer_list *);
	u16 cpu_hint;
};

union sigval {
	int sival_int;
	void *sival_ptr;
};

/* Also defined, with a different layout, in other.c. */
struct stats {
	u64 hits;
	u64 misses;
};

/* ---- instances in .data, in definition order ---------------------- */

struct task_struct init_task = {
	.thread_flags = 0x4000,
	.usage = { { 2 } },
	.prio = 120,
	.sched_reset_on_fork = 1,
	.jobctl_pending = 0x12345,
	.restart_flags = 0xabcde,
	.brk_randomized = 5,
	.in_lru_fault = 0x55,
	.comm = "swapper/0",
};

struct page zero_page_meta = { .flags = 0x10000, ._refcount = { 1 } };

struct ring_buffer_event rb_sample_event = {
	.type_len = 3, .time_delta = 100,
	.array = { 1, 2, 3 },
};

struct sk_buff skb_template = { .len = 60, .pkt_type = 2, .protocol = 0x0008 };

struct timer_list watchdog_timer = { .flags = 7, .expires = 250, .cpu_hint = 1 };

union sigval default_sigval = { .sival_int = -1 };

struct stats kernel_stats = { 1, 2 };

/* 32 bytes, 64-aligned: puts root_user at offset 0x20 of a line in OLD. */
__attribute__((aligned(64))) const char *types__ptrace[4] = {
	"long", "long", "unsigned long", "unsigned long",
};

struct user_struct root_user = {
	.__count = { { 1 } },
	.pipe_bufs = { 0 },
	.uid = { 0 },
	.locked_vm = { 0 },
	.ratelimit = { { 0 }, 5 * 250, 10, 0, 0, 0, 0 },
};

struct user_namespace init_user_ns = {
	.uid_map_nr_extents = 1,
	.gid_map_nr_extents = 1,
	.ns_count = { 3 },
	.creator = &root_user,
	.ucount_max = { 1, 2, 3, 4, 5, 6, 7, 8 },
};

int file_caps_enabled = 1;

/* .bss */
__used unsigned long jiffies_64;
__used unsigned long nr_threads;

/* Empty without lockdep, as in the kernel: a data object of size 0. */
struct lock_class_key { };
__used struct lock_class_key uidhash_lock_key;

__used struct list_head uidhash_table[8];

/* .rodata */
__used const char linux_banner[] = "Linux version 6.1.0-layout-diff (fixture)\n";

/* Same name as the static in other.c; the STT_FILE symbol tells them apart. */
static __used int counter = 10;

/* ------------------------------------------------------------------ */
/* 7. Text: all functions 16-aligned, in source order.                  */

void __hot_fn native_halt(void);
void __hot_fn start_kernel(void);
int other_tick(void);

static __hot_fn void counter_bump(void)
{
	WRITE_ONCE(counter, READ_ONCE(counter) + 1);
}

__hot_fn void do_machine_check(unsigned long status)
{
	WRITE_ONCE(mces_seen.status, status);
	WRITE_ONCE(mces_seen.bank, 3);
	WRITE_ONCE(injectm.status, status | 1);
	WRITE_ONCE(mce_exception_count, READ_ONCE(mce_exception_count) + 1);
#ifdef NEW
	WRITE_ONCE(mces_seen.kflags, 1);
#endif
}

__hot_fn void mce_timer_fn(void)
{
	WRITE_ONCE(mce_poll_count, READ_ONCE(mce_poll_count) + 1);
	WRITE_ONCE(tsc_adjust.nextcheck, READ_ONCE(tsc_adjust.nextcheck) + 1);
}

/* Grows in NEW, so the functions after it move by an amount that is not
 * a multiple of 64 (until do_syscall_64, which is 64-aligned). */
__hot_fn int grow_me(int x)
{
	volatile int acc = x;
	acc += 1;
	acc ^= 0x5a;
#ifdef NEW
	acc += 3;
	acc ^= 0x33;
	acc += 5;
	acc ^= 0x77;
	acc += 7;
	acc ^= 0x11;
	acc += 9;
	acc ^= 0x22;
#endif
	return acc;
}

__hot_fn int futex_hash(unsigned long key)
{
	unsigned long h = key;
	int i;

	for (i = 0; i < 4; i++)
		h = (h ^ (h >> 13)) * 0x9e3779b97f4a7c15UL;
	return (int)(h & 255);
}

__hot_fn void sigqueue_charge(void)
{
	__atomic_fetch_add(&root_user.__count.refs.counter, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&root_user.pipe_bufs.counter, 1, __ATOMIC_RELAXED);
}

__hot_fn void scheduler_tick(void)
{
	WRITE_ONCE(runqueues.nr_switches, READ_ONCE(runqueues.nr_switches) + 1);
	WRITE_ONCE(runqueues.clock, READ_ONCE(runqueues.clock) + tick_nsec);
	WRITE_ONCE(arch_freq_scale, READ_ONCE(arch_freq_scale) + 1);
}

/* 64-aligned, like a hand-aligned entry point. */
__hot_fn __attribute__((aligned(64))) void do_syscall_64(unsigned long nr)
{
	WRITE_ONCE(process_counts, READ_ONCE(process_counts) + nr);
	WRITE_ONCE(init_task.atomic_flags, nr);
}

__hot_fn void tick_do_update_jiffies64(void)
{
	static __used struct ratelimit_state rs = { { 0 }, 250, 10, 0, 0, 0, 0 };

	WRITE_ONCE(jiffies_lock.seqcount.sequence, jiffies_lock.seqcount.sequence + 1);
	WRITE_ONCE(jiffies_64, READ_ONCE(jiffies_64) + 1);
	WRITE_ONCE(rs.printed, rs.printed + 1);
	WRITE_ONCE(jiffies_lock.seqcount.sequence, jiffies_lock.seqcount.sequence + 1);
}

__hot_fn void account_page(struct page *p)
{
	WRITE_ONCE(p->_refcount.counter, p->_refcount.counter + 1);
	WRITE_ONCE(p->lru.next, (struct list_head *)0);
}

__hot_fn unsigned int skb_len(const struct sk_buff *skb)
{
	return READ_ONCE(skb->len) + READ_ONCE(skb_template.priority);
}

__hot_fn void native_halt(void)
{
	for (;;) {
#if defined(__x86_64__)
		__asm__ volatile("hlt");
#else
		__asm__ volatile("" ::: "memory");
#endif
	}
}

__hot_fn void start_kernel(void)
{
	do_machine_check(0x8000000000000000UL);
	mce_timer_fn();
	WRITE_ONCE(current_task, (void *)&init_task);
	grow_me(READ_ONCE(cpu_number));
	futex_hash((unsigned long)&root_user);
	sigqueue_charge();
	scheduler_tick();
	do_syscall_64(1);
	tick_do_update_jiffies64();
	account_page(&zero_page_meta);
	skb_len(&skb_template);
	counter_bump();
	other_tick();
	native_halt();
}

__attribute__((noreturn, used, noinline)) void _start(void)
{
	start_kernel();
	for (;;)
		;
}
