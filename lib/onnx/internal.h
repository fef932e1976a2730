/* Internal helpers of lib/onnx shared by the tensor reader, the weight
 * store and the importer. Not part of the public interface. */
#ifndef PB_ONNX_INTERNAL_H
#define PB_ONNX_INTERNAL_H

#include "onnx/onnx.pb-c.h"

#include "core/pb.h"
#include "core/tensor.h"

/* Decode "p" into "t" (which the caller clears later). "where" prefixes
 * the error ("file" or "file: initializer 'w'"); external data is read
 * from files beside the model file "model" (NULL: from stdin, an error). */
int pb_onnx_tensor_from_proto(struct pb_ctx *ctx, const char *where,
			      const char *model, const Onnx__TensorProto *p,
			      struct pb_tensor *t);

/* Check the external data reference of "p", if any, against the files
 * beside "model" without reading the data; "where" prefixes the error. */
int pb_onnx_external_check(struct pb_ctx *ctx, const char *where,
			   const char *model, const Onnx__TensorProto *p);

/* Unpack the serialized ModelProto "data" of "len" bytes; NULL (reported
 * against "where") when it is not a readable ONNX model. */
Onnx__ModelProto *pb_onnx_model_unpack(struct pb_ctx *ctx, const char *where,
				       const void *data, size_t len);

/* The tensor of Constant node "n" ("value" attribute), or NULL. */
const Onnx__TensorProto *pb_onnx_constant_value(const Onnx__NodeProto *n);


#endif
