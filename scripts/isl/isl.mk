# pb's own build of isl with IMath and the small-integer optimisation (the
# build Polly and islpy use, configure --with-int=imath-32), from the isl
# sources in islpy's source distribution; run by scripts/deps.sh --isl
# (docs/design.md, "isl"):
#   make -f scripts/isl/isl.mk SRC=DIR/isl O=BUILDDIR PREFIX=DIR VERSION=V install
# installs PREFIX/lib/libisl.a and PREFIX/include/isl/*.h. The sources are
# isl's libisl_la_SOURCES for imath-32 (IMath through imath_wrap/, whose
# wrap.h prefixes IMath's names with isl_); isl_config.h is ours
# (scripts/isl/isl_config.h), gitversion.h and isl/stdint.h are written
# here as isl's configure writes them.
.DELETE_ON_ERROR:
.SUFFIXES:

SRC ?= isl
O ?= isl-build
PREFIX ?= isl-prefix
VERSION ?= isl
CC ?= gcc
ISL_CFLAGS ?= -O2 -g
HERE := $(dir $(lastword $(MAKEFILE_LIST)))

MP_SRC := isl_imath.c isl_int_sioimath.c isl_val_sioimath.c \
	imath_wrap/gmp_compat.c imath_wrap/imath.c imath_wrap/imrat.c
ISL_SRC := $(MP_SRC) basis_reduction_tab.c print.c \
	isl_aff.c isl_aff_map.c isl_affine_hull.c isl_arg.c isl_ast.c \
	isl_ast_build.c isl_ast_build_expr.c isl_ast_codegen.c isl_ast_graft.c \
	isl_bernstein.c isl_blk.c isl_bound.c isl_box.c isl_coalesce.c \
	isl_constraint.c isl_convex_hull.c isl_ctx.c isl_deprecated.c \
	isl_dim_map.c isl_equalities.c isl_factorization.c isl_farkas.c \
	isl_ffs.c isl_flow.c isl_fold.c isl_hash.c isl_id.c \
	isl_id_to_ast_expr.c isl_id_to_id.c isl_id_to_pw_aff.c isl_ilp.c \
	isl_input.c isl_local.c isl_local_space.c isl_lp.c isl_map.c \
	isl_map_list.c isl_map_simplify.c isl_map_subtract.c \
	isl_map_to_basic_set.c isl_mat.c isl_morph.c isl_obj.c isl_options.c \
	isl_output.c isl_point.c isl_polynomial.c isl_printer.c isl_range.c \
	isl_reordering.c isl_sample.c isl_scan.c isl_schedule.c \
	isl_schedule_band.c isl_schedule_constraints.c isl_schedule_node.c \
	isl_schedule_read.c isl_schedule_tree.c isl_scheduler.c \
	isl_scheduler_clustering.c isl_seq.c isl_set_list.c \
	isl_set_to_ast_graft_list.c isl_sort.c isl_space.c isl_stream.c \
	isl_stride.c isl_tab.c isl_tab_pip.c isl_tarjan.c \
	isl_transitive_closure.c isl_union_map.c isl_val.c isl_vec.c \
	isl_version.c isl_vertices.c
ISL_OBJ := $(ISL_SRC:%.c=$(O)/%.o)
# The public headers but those of the GMP interface and the C++ bindings
# (which isl installs only when built with GMP and its interface).
HDR := $(filter-out %/val_gmp.h %/cpp.h %/typed_cpp.h %/cpp-checked.h \
	%/cpp-checked-conversion.h,$(wildcard $(SRC)/include/isl/*.h)) \
	$(wildcard $(SRC)/include/isl/*.c)
CPPFLAGS_ISL := -I$(O) -I$(HERE) -I$(SRC) -I$(SRC)/include -I$(O)/include \
	-I$(SRC)/imath_wrap

all: $(O)/libisl.a

$(O)/gitversion.h:
	@mkdir -p $(dir $@)
	echo '#define GIT_HEAD_ID "$(VERSION)"' > $@

$(O)/include/isl/stdint.h:
	@mkdir -p $(dir $@)
	printf '#ifndef _ISL_INCLUDE_ISL_STDINT_H\n#define _ISL_INCLUDE_ISL_STDINT_H 1\n#include <stdint.h>\n#endif\n' > $@

$(O)/%.o: $(SRC)/%.c $(HERE)isl_config.h | $(O)/gitversion.h $(O)/include/isl/stdint.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ISL) $(ISL_CFLAGS) -c $< -o $@

$(O)/libisl.a: $(ISL_OBJ)
	rm -f $@ && ar rcs $@ $^

install: $(O)/libisl.a
	mkdir -p $(PREFIX)/lib $(PREFIX)/include/isl
	cp $(O)/libisl.a $(PREFIX)/lib/
	cp $(HDR) $(O)/include/isl/stdint.h $(PREFIX)/include/isl/

.PHONY: all install
