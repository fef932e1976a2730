/* Reading an nvdisasm listing: the kernels, their instructions by class,
 * their loops and the mix of the hottest inner loop.
 *
 * A listing holds one section per kernel,
 *
 *	.section	.text.k0_MatMul_0_kernel,"ax",@progbits
 *	...
 *   .L_x_0:
 *	/ *0230* /    LDG.E R18, desc[UR4][R6.64+-0x80] ;
 *	...
 *	/ *0560* /    @P0 BRA `(.L_x_0) ;
 *
 * (without the spaces in the comments). A loop is found from its
 * backward branch: the instructions from the branch's target to the last
 * branch back to that target. Loops nest by containment; the hottest
 * inner loop is the innermost loop with the most loops around it (of
 * equal depth, the one with the most flops, a staged kernel's compute
 * loop rather than its copy loop beside it; then the shortest, a full
 * tile's loop rather than the same loop of a partial tile, whose points
 * pb-codegen guards one by one and ptxas predicates), which for
 * the kernels pb and Triton generate is the reduction loop of a product
 * or the row loop of a reduction. The
 * counts are static: one per instruction of the loop body, as the issue
 * slots of one iteration when no branch inside it is taken. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sass/sass.h"

static const char *const class_names[PB_SASS_NCLASS] = {
	"FFMA", "FADD", "FMUL", "HALF", "FPX", "MMA", "GMMA",
	"LDG", "LDS", "LDGSTS", "LDSM", "STS", "STG", "LOCAL", "MEMX",
	"BAR", "SYNC", "INT", "FSEL", "MOV", "CTRL", "OTHER",
};

const char *pb_sass_class_name(enum pb_sass_class c)
{
	return c >= 0 && c < PB_SASS_NCLASS ? class_names[c] : "?";
}

/* Opcodes by class; the uniform-datapath twins (a leading U) of the
 * integer ones count as integer too. */
static const struct {
	const char *op;
	enum pb_sass_class cls;
	double flops;
} opcodes[] = {
	{"FFMA", PB_SASS_FFMA, 2}, {"FFMA32I", PB_SASS_FFMA, 2},
	{"FADD", PB_SASS_FADD, 1}, {"FADD32I", PB_SASS_FADD, 1},
	{"FMUL", PB_SASS_FMUL, 1}, {"FMUL32I", PB_SASS_FMUL, 1},
	{"HFMA2", PB_SASS_HALF, 4}, {"HADD2", PB_SASS_HALF, 2},
	{"HMUL2", PB_SASS_HALF, 2}, {"HMNMX2", PB_SASS_HALF, 2},
	{"FMNMX", PB_SASS_FPX, 1}, {"MUFU", PB_SASS_FPX, 1},
	{"DFMA", PB_SASS_FPX, 2}, {"DADD", PB_SASS_FPX, 1},
	{"DMUL", PB_SASS_FPX, 1},
	{"HMMA", PB_SASS_MMA, 0}, {"IMMA", PB_SASS_MMA, 0},
	{"DMMA", PB_SASS_MMA, 0}, {"BMMA", PB_SASS_MMA, 0},
	{"HGMMA", PB_SASS_GMMA, 0}, {"IGMMA", PB_SASS_GMMA, 0},
	{"QGMMA", PB_SASS_GMMA, 0}, {"BGMMA", PB_SASS_GMMA, 0},
	{"LDG", PB_SASS_LDG, 0}, {"LDS", PB_SASS_LDS, 0},
	{"LDGSTS", PB_SASS_LDGSTS, 0}, {"LDSM", PB_SASS_LDSM, 0},
	{"STS", PB_SASS_STS, 0}, {"STG", PB_SASS_STG, 0},
	{"LDL", PB_SASS_LOCAL, 0}, {"STL", PB_SASS_LOCAL, 0},
	{"LD", PB_SASS_MEMX, 0}, {"ST", PB_SASS_MEMX, 0},
	{"ATOM", PB_SASS_MEMX, 0}, {"ATOMS", PB_SASS_MEMX, 0},
	{"ATOMG", PB_SASS_MEMX, 0}, {"RED", PB_SASS_MEMX, 0},
	{"REDG", PB_SASS_MEMX, 0}, {"UTMALDG", PB_SASS_MEMX, 0},
	{"UTMASTG", PB_SASS_MEMX, 0}, {"UBLKCP", PB_SASS_MEMX, 0},
	{"BAR", PB_SASS_BAR, 0},
	{"DEPBAR", PB_SASS_SYNC, 0}, {"LDGDEPBAR", PB_SASS_SYNC, 0},
	{"SYNCS", PB_SASS_SYNC, 0}, {"WARPSYNC", PB_SASS_SYNC, 0},
	{"MEMBAR", PB_SASS_SYNC, 0}, {"ARRIVES", PB_SASS_SYNC, 0},
	{"WARPGROUP", PB_SASS_SYNC, 0}, {"FENCE", PB_SASS_SYNC, 0},
	{"IADD3", PB_SASS_INT, 0}, {"IADD", PB_SASS_INT, 0},
	{"IADD32I", PB_SASS_INT, 0}, {"IMAD", PB_SASS_INT, 0},
	{"IMUL", PB_SASS_INT, 0}, {"IMUL32I", PB_SASS_INT, 0},
	{"LEA", PB_SASS_INT, 0}, {"LOP3", PB_SASS_INT, 0},
	{"LOP", PB_SASS_INT, 0}, {"LOP32I", PB_SASS_INT, 0},
	{"SHF", PB_SASS_INT, 0}, {"SHL", PB_SASS_INT, 0},
	{"SHR", PB_SASS_INT, 0}, {"ISETP", PB_SASS_INT, 0},
	{"IMNMX", PB_SASS_INT, 0}, {"IABS", PB_SASS_INT, 0},
	{"POPC", PB_SASS_INT, 0}, {"FLO", PB_SASS_INT, 0},
	{"BREV", PB_SASS_INT, 0}, {"PRMT", PB_SASS_INT, 0},
	{"SGXT", PB_SASS_INT, 0}, {"BMSK", PB_SASS_INT, 0},
	{"IDP", PB_SASS_INT, 0}, {"VIADD", PB_SASS_INT, 0},
	{"VIADDMNMX", PB_SASS_INT, 0}, {"VIMNMX", PB_SASS_INT, 0},
	{"VIMNMX3", PB_SASS_INT, 0}, {"SEL", PB_SASS_INT, 0},
	{"PLOP3", PB_SASS_INT, 0},
	{"FSEL", PB_SASS_FSEL, 0},
	{"MOV", PB_SASS_MOV, 0}, {"MOV32I", PB_SASS_MOV, 0},
	{"S2R", PB_SASS_MOV, 0}, {"S2UR", PB_SASS_MOV, 0},
	{"CS2R", PB_SASS_MOV, 0}, {"R2UR", PB_SASS_MOV, 0},
	{"UMOV", PB_SASS_MOV, 0},
	{"BRA", PB_SASS_CTRL, 0}, {"BRX", PB_SASS_CTRL, 0},
	{"JMP", PB_SASS_CTRL, 0}, {"JMX", PB_SASS_CTRL, 0},
	{"EXIT", PB_SASS_CTRL, 0}, {"RET", PB_SASS_CTRL, 0},
	{"CALL", PB_SASS_CTRL, 0}, {"BSSY", PB_SASS_CTRL, 0},
	{"BSYNC", PB_SASS_CTRL, 0}, {"BREAK", PB_SASS_CTRL, 0},
	{"NOP", PB_SASS_CTRL, 0}, {"YIELD", PB_SASS_CTRL, 0},
	{"ELECT", PB_SASS_CTRL, 0}, {"KILL", PB_SASS_CTRL, 0},
};

/* The class of opcode "op" (without modifiers) and its flops per thread;
 * PB_SASS_OTHER when the table does not know it. */
static enum pb_sass_class lookup(const char *op, double *flops)
{
	*flops = 0;
	for (size_t i = 0; i < sizeof(opcodes) / sizeof(opcodes[0]); i++)
		if (!strcmp(op, opcodes[i].op)) {
			*flops = opcodes[i].flops;
			return opcodes[i].cls;
		}
	if (op[0] == 'U' && op[1]) {
		double f;
		if (lookup(op + 1, &f) == PB_SASS_INT)
			return PB_SASS_INT;
	}
	return PB_SASS_OTHER;
}

/* Does the modifier list "mods" (".E.128.CONSTANT") hold "m" (".128")
 * as a whole modifier? */
static int has_mod(const char *mods, const char *m)
{
	size_t k = strlen(m);
	for (const char *p = strstr(mods, m); p; p = strstr(p + 1, m))
		if (p[k] == '\0' || p[k] == '.')
			return 1;
	return 0;
}

/* The flops per thread of a tensor-core instruction of class "cls" with
 * modifiers "mods": HMMA.16816 is m16 n8 k16 per warp, HGMMA.64x128x16
 * m64 n128 k16 per warpgroup (128 threads). */
static double mma_flops(enum pb_sass_class cls, const char *mods)
{
	const char *p = mods;
	while (*p && !isdigit((unsigned char)*p))
		p++;
	if (cls == PB_SASS_GMMA) {
		long m = strtol(p, (char **)&p, 10), n = 0, k = 0;
		if (*p == 'x')
			n = strtol(p + 1, (char **)&p, 10);
		if (*p == 'x')
			k = strtol(p + 1, NULL, 10);
		return 2.0 * m * n * k / 128;
	}
	/* "16816": m 16, n 8, k 16; "1688": 16 8 8; "884": 8 8 4 */
	long m = p[0] == '1' && p[1] == '6' ? 16 : 8;
	p += m == 16 ? 2 : 1;
	long n = *p == '8' ? 8 : 0;
	if (n)
		p++;
	long k = strtol(p, NULL, 10);
	return 2.0 * m * n * k / 32;
}

/* Is the operand list "ops" of an HFMA2.MMA the zeroing idiom
 * "R17, -RZ, RZ, 0, 0" (a move of a constant, not math)? */
static int zero_idiom(const char *ops)
{
	const char *p = strchr(ops, ',');
	if (!p)
		return 0;
	p++;
	while (*p == ' ')
		p++;
	return !strncmp(p, "-RZ, RZ", 7) || !strncmp(p, "RZ, RZ", 6);
}

void pb_sass_classify(const char *text, struct pb_sass_inst *i)
{
	char op[64], mods[64];
	const char *p = text;
	while (*p == ' ' || *p == '\t' || *p == '{')
		p++;
	if (*p == '@') { /* a predicate: @P0, @!UP1 */
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	size_t k = strcspn(p, " .;");
	snprintf(op, sizeof(op), "%.*s", (int)(k < 63 ? k : 63), p);
	size_t km = strcspn(p + k, " ;");
	snprintf(mods, sizeof(mods), "%.*s", (int)(km < 63 ? km : 63), p + k);
	const char *ops = p + k + km;
	i->cls = lookup(op, &i->flops);
	i->width = PB_SASS_W32;
	if (i->cls == PB_SASS_MMA || i->cls == PB_SASS_GMMA)
		i->flops = mma_flops(i->cls, mods);
	if (i->cls == PB_SASS_HALF && !strcmp(op, "HFMA2") &&
	    has_mod(mods, ".MMA") && zero_idiom(ops)) {
		i->cls = PB_SASS_MOV;
		i->flops = 0;
	}
	if (i->cls == PB_SASS_HALF && has_mod(mods, ".F32")) {
		/* HADD2.F32 R0, -RZ, R2.H0_H0: a conversion */
		i->cls = PB_SASS_OTHER;
		i->flops = 0;
	}
	if (i->cls == PB_SASS_INT && !strcmp(op, "IMAD") &&
	    (has_mod(mods, ".MOV") || has_mod(mods, ".MOV.U32"))) {
		i->cls = PB_SASS_MOV;
	}
	if (i->cls < PB_SASS_LDG || i->cls > PB_SASS_MEMX)
		return;
	if (i->cls == PB_SASS_LDSM) {
		if (has_mod(mods, ".4"))
			i->width = PB_SASS_W128;
		else if (has_mod(mods, ".2"))
			i->width = PB_SASS_W64;
	} else if (has_mod(mods, ".128")) {
		i->width = PB_SASS_W128;
	} else if (has_mod(mods, ".64")) {
		i->width = PB_SASS_W64;
	}
}

/* Add instruction "i" to "m". */
static void mix_add(struct pb_sass_mix *m, const struct pb_sass_inst *i)
{
	m->total++;
	m->n[i->cls]++;
	if (i->cls >= PB_SASS_LDG && i->cls <= PB_SASS_MEMX) {
		m->width[i->cls][i->width]++;
		m->mem++;
	}
	if (i->cls <= PB_SASS_GMMA)
		m->math++;
	m->flops += i->flops;
}

double pb_sass_math_share(const struct pb_sass_mix *m)
{
	return m->total ? (double)m->math / m->total : 0;
}

double pb_sass_flops_per_mem(const struct pb_sass_mix *m)
{
	return m->mem ? m->flops / m->mem : 0;
}

/* A label of a kernel being read: its name and the index of the
 * instruction it names. */
struct label {
	char name[128];
	int index;
};

/* A kernel being read: its branches' target labels by instruction. */
struct reading {
	struct pb_sass_kernel *k;
	struct label *labels;
	int nlabels;
	char (*target)[128]; /* per instruction: "" or the label */
	int cap;
};

/* The line from "p" (without its newline) into "buf" (size "n"), trimmed
 * at both ends; the start of the next line, or NULL at the end. */
static const char *next_line(const char *p, char *buf, size_t n)
{
	const char *end = strchr(p, '\n');
	size_t len = end ? (size_t)(end - p) : strlen(p);
	while (len && isspace((unsigned char)*p)) {
		p++;
		len--;
	}
	while (len && isspace((unsigned char)p[len - 1]))
		len--;
	snprintf(buf, n, "%.*s", (int)(len < n - 1 ? len : n - 1), p);
	return end ? end + 1 : NULL;
}

/* The address of an instruction line "line" ("/ *0230* / LDG ...") and
 * its text after the address into "*text"; -1 for other lines. */
static long inst_addr(const char *line, const char **text)
{
	if (strncmp(line, "/*", 2) || !isxdigit((unsigned char)line[2]))
		return -1;
	char *end;
	long a = strtol(line + 2, &end, 16);
	if (strncmp(end, "*/", 2))
		return -1;
	*text = end + 2;
	return a;
}

/* Finish the kernel of "r": resolve the branch targets, find the loops,
 * their mixes and the hottest inner loop. */
static void finish(struct reading *r)
{
	struct pb_sass_kernel *k = r->k;
	if (!k)
		return;
	for (int i = 0; i < k->ninst; i++) {
		k->inst[i].target = -1;
		for (int l = 0; r->target[i][0] && l < r->nlabels; l++)
			if (!strcmp(r->labels[l].name, r->target[i]) &&
			    r->labels[l].index < k->ninst) {
				k->inst[i].target = r->labels[l].index;
				break;
			}
	}
	for (int i = 0; i < k->ninst; i++) {
		int t = (int)k->inst[i].target;
		if (t < 0 || t >= i)
			continue; /* not a backward branch, or BRA to itself */
		int l;
		for (l = 0; l < k->nloops && k->loops[l].first != t; l++)
			;
		if (l == k->nloops) {
			k->loops = pb_xrealloc(k->loops, k->nloops + 1,
					       sizeof(*k->loops));
			memset(&k->loops[l], 0, sizeof(k->loops[l]));
			k->loops[l].first = t;
			k->nloops++;
		}
		k->loops[l].last = i;
	}
	k->hot = -1;
	for (int l = 0; l < k->nloops; l++) {
		struct pb_sass_loop *L = &k->loops[l];
		L->inner = 1;
		for (int o = 0; o < k->nloops; o++) {
			const struct pb_sass_loop *O = &k->loops[o];
			if (o == l)
				continue;
			if (O->first <= L->first && O->last >= L->last)
				L->depth++;
			else if (L->first <= O->first && L->last >= O->last)
				L->inner = 0;
		}
		for (int i = L->first; i <= L->last; i++)
			mix_add(&L->mix, &k->inst[i]);
	}
	for (int l = 0; l < k->nloops; l++) {
		const struct pb_sass_loop *L = &k->loops[l];
		const struct pb_sass_loop *H = k->hot >= 0 ? &k->loops[k->hot]
							   : NULL;
		if (L->inner && (!H || L->depth > H->depth ||
				 (L->depth == H->depth &&
				  (L->mix.flops > H->mix.flops ||
				   (L->mix.flops == H->mix.flops &&
				    L->mix.total < H->mix.total)))))
			k->hot = l;
	}
	free(r->labels);
	free(r->target);
	memset(r, 0, sizeof(*r));
}

/* Start a kernel named "name" (its first "len" characters) in "s". */
static void start(struct pb_sass *s, struct reading *r, const char *name,
		  size_t len)
{
	finish(r);
	s->k = pb_xrealloc(s->k, s->n + 1, sizeof(*s->k));
	r->k = &s->k[s->n++];
	memset(r->k, 0, sizeof(*r->k));
	r->k->name = strndup(name, len);
	r->k->hot = -1;
}

/* Read the instruction "text" at address "addr" into the kernel of "r". */
static void add_inst(struct reading *r, long addr, const char *text)
{
	struct pb_sass_kernel *k = r->k;
	if (k->ninst == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		k->inst = pb_xrealloc(k->inst, r->cap, sizeof(*k->inst));
		r->target = pb_xrealloc(r->target, r->cap, sizeof(*r->target));
	}
	struct pb_sass_inst *i = &k->inst[k->ninst];
	memset(i, 0, sizeof(*i));
	i->addr = addr;
	i->target = -1;
	pb_sass_classify(text, i);
	r->target[k->ninst][0] = '\0';
	const char *t = strstr(text, "`(");
	if (i->cls == PB_SASS_CTRL && t &&
	    (strstr(text, "BRA") || strstr(text, "JMP"))) {
		size_t n = strcspn(t + 2, ")");
		snprintf(r->target[k->ninst], sizeof(r->target[0]), "%.*s",
			 (int)(n < 127 ? n : 127), t + 2);
	}
	mix_add(&k->mix, i);
	k->ninst++;
}

int pb_sass_parse(const char *text, struct pb_sass *s)
{
	struct reading r = {0};
	char line[4096];
	int ninst = 0;
	memset(s, 0, sizeof(*s));
	for (const char *p = text; p;) {
		p = next_line(p, line, sizeof(line));
		const char *it;
		long addr;
		if (!strncmp(line, ".section", 8) &&
		    (line[8] == ' ' || line[8] == '\t')) {
			const char *name = strstr(line, ".text.");
			if (name) {
				name += strlen(".text.");
				start(s, &r, name, strcspn(name, ", \t\""));
			} else {
				finish(&r);
			}
		} else if (!r.k) {
			continue;
		} else if ((addr = inst_addr(line, &it)) >= 0) {
			while (*it == ' ' || *it == '\t')
				it++;
			if (!*it || *it == ';')
				continue;
			add_inst(&r, addr, it);
			ninst++;
		} else if (line[0] && line[strlen(line) - 1] == ':' &&
			   !strpbrk(line, " \t")) {
			r.labels = pb_xrealloc(r.labels, r.nlabels + 1,
					       sizeof(*r.labels));
			struct label *l = &r.labels[r.nlabels++];
			snprintf(l->name, sizeof(l->name), "%.*s",
				 (int)strlen(line) - 1, line);
			l->index = r.k->ninst;
		}
	}
	finish(&r);
	if (!ninst) {
		pb_sass_clear(s);
		return -1;
	}
	return 0;
}

void pb_sass_clear(struct pb_sass *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->k[i].name);
		free(s->k[i].inst);
		free(s->k[i].loops);
	}
	free(s->k);
	memset(s, 0, sizeof(*s));
}

const struct pb_sass_kernel *pb_sass_kernel(const struct pb_sass *s,
					    const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->k[i].name, name))
			return &s->k[i];
	return NULL;
}
