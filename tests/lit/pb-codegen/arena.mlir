// RUN: pb-codegen %S/Inputs/chain.mlir --plan %t.json | FileCheck %s
// RUN: pb-codegen %S/Inputs/chain.mlir --no-memory-plan | FileCheck --check-prefix=NOPLAN %s
// RUN: %python -c "import json,sys; p=json.load(open(sys.argv[1])); print(p['arena'], p['memory']['peak'], [b.get('arena_offset') for b in p['buffers']])" %t.json | FileCheck --check-prefix=JSON %s

// The scratch buffers of a launch plan packed by liveness into one arena
// (Inputs/chain.mlir): largest first, each at the lowest offset of the
// smallest gap between the buffers already placed that are live with it.
// %d (8 KiB, launches 3-4) goes first at 0; %a (0-2) is live with nothing
// placed: 0; %b (1-2) is live with %a: 4096; %c (2-3) is live with %a, %b
// and %d: past them, 8192. 12 KiB in all, the most live at once, for 20 KiB
// of buffers; peak = arena + input + output.

// CHECK:      // {"version": 1, "arch": "sm_90", "source": null, "arena": 12288,
// CHECK-NEXT: //  "memory": {"peak": 20480, "arena": 12288, "intermediates": 20480, "live_max": 12288, "inputs": 4096, "outputs": 4096, "params": 0},
// CHECK:      {"id": 2, "kind": "scratch", {{.*}} "bytes": 4096, "arena_offset": 0, "live": [0, 2]},
// CHECK-NEXT: {"id": 3, "kind": "scratch", {{.*}} "bytes": 4096, "arena_offset": 4096, "live": [1, 2]},
// CHECK-NEXT: {"id": 4, "kind": "scratch", {{.*}} "bytes": 4096, "arena_offset": 8192, "live": [2, 3]},
// CHECK-NEXT: {"id": 5, "kind": "scratch", {{.*}} "bytes": 8192, "arena_offset": 0, "live": [3, 4]}],

// --no-memory-plan: one allocation per buffer, the old footprint.
// NOPLAN:      // {"version": 1, "arch": "sm_90", "source": null,
// NOPLAN-NEXT: //  "memory": {"peak": 28672, "arena": null, "intermediates": 20480, "live_max": 12288, "inputs": 4096, "outputs": 4096, "params": 0},
// NOPLAN-NOT:  arena_offset
// NOPLAN:      {"id": 5, "kind": "scratch", "dtype": "f32", "shape": [2, 1024], "bytes": 8192, "live": [3, 4]}],

// JSON: 12288 20480 [None, None, 0, 4096, 8192, 0]
