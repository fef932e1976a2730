"""Write DIR/dyn.onnx (y = Relu(x) + b, x: [N, 4] with a symbolic N, b: a
[4] initializer), DIR/x.npy (3 x 4) and DIR/y.npy (its expected output)."""
import os
import sys

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
b = np.array([1, 2, 3, 4], np.float32)
g = h.make_graph(
    [h.make_node('Relu', ['x'], ['r']), h.make_node('Add', ['r', 'b'], ['y'])],
    'dyn', [h.make_tensor_value_info('x', T.FLOAT, ['N', 4])],
    [h.make_tensor_value_info('y', T.FLOAT, ['N', 4])],
    initializer=[nh.from_array(b, 'b')])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]),
          os.path.join(out, 'dyn.onnx'))
x = (np.arange(12, dtype=np.float32) - 6).reshape(3, 4)
np.save(os.path.join(out, 'x.npy'), x)
np.save(os.path.join(out, 'y.npy'), np.maximum(x, 0) + b)
