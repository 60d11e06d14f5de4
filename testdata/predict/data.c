/* data.c - one unit holding every class of change the predictions issue names, each
 * switched on by a -D of build.sh:
 *   INSERT       an 8-byte member inserted after us.count (root_u grows)
 *   ALIGN_DATA   root_u ____cacheline_aligned_in_smp (.data)
 *   ALIGN_BSS    oops_flag, a zero-initialised global in .bss, likewise
 *   RM_DATA      min_kb (.data) __read_mostly
 *   RM_BSS       frozen, a zero-initialised static in .bss, __read_mostly
 *   PCPU_DEF     seen_s and seen_g DEFINE_PER_CPU_ALIGNED, the header left as is
 *   PCPU_DECL    the same with the header's DECLARE_PER_CPU_ALIGNED too
 * init_ns follows root_u (GCC emits a unit's objects last-defined first): its type holds a member aligned to 8 (rcu_head's
 * __aligned(sizeof(void *))), which does not stop GCC raising the 56-byte object to 32. */
#if defined(PCPU_DECL)
#define DECLARE_ALIGNED
#endif
#include "predict.h"

#ifdef RM_DATA
#define RM_DATA_ATTR __read_mostly
#else
#define RM_DATA_ATTR
#endif
#ifdef RM_BSS
#define RM_BSS_ATTR __read_mostly
#else
#define RM_BSS_ATTR
#endif
#ifdef ALIGN_DATA
#define ALIGN_DATA_ATTR ____cacheline_aligned_in_smp
#else
#define ALIGN_DATA_ATTR
#endif
#ifdef ALIGN_BSS
#define ALIGN_BSS_ATTR ____cacheline_aligned_in_smp
#else
#define ALIGN_BSS_ATTR
#endif

struct cb { struct cb *next; void (*func)(struct cb *); } __attribute__((__aligned__(8)));
struct ns { struct cb rcu; long level[4]; int count; };
struct us {
	int count;
#ifdef INSERT
	unsigned long inserted;
#endif
	long files;
	long pipes[2];
};

int first_d = 1;
struct ns init_ns = { { 0, 0 }, { 1, 2, 3, 4 }, 5 };
struct us root_u ALIGN_DATA_ATTR = { 1, 2, { 3, 4 } };
int min_kb RM_DATA_ATTR = 1024;
int user_kb = -1;
int boost __read_mostly = 15000;
int hdr_running __read_mostly = 1;
int hdr_features __read_mostly = 7;

static int frozen RM_BSS_ATTR;
int oops_flag ALIGN_BSS_ATTR;
long bss_tail[3];

DEFINE_PER_CPU(long, events);
#if defined(PCPU_DEF) || defined(PCPU_DECL)
static DEFINE_PER_CPU_ALIGNED(struct rec, seen_s);
DEFINE_PER_CPU_ALIGNED(struct rec, seen_g);
#else
static DEFINE_PER_CPU(struct rec, seen_s);
DEFINE_PER_CPU(struct rec, seen_g);
#endif
DEFINE_PER_CPU(int, flags);

void set_frozen(int v)
{
	frozen = v;
	oops_flag = v;
}

int use_data(int x)
{
	return frozen + oops_flag + min_kb + root_u.count + init_ns.count + x
		+ hdr_running + (int)seen_s.w[x & 15];
}
