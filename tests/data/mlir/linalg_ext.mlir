// ByteIR linalg_ext ops in the custom assembly ByteIR prints (`dimension(1)`,
// `inclusive(true)`, `axis([2])`, `layout = "nn"`), upstream linalg.softmax, and
// ByteIR's `transform.structured.tile_ext` with positional sizes. Written for
// hlo-lsp's tests after the op descriptions of the ByteIR linalg-ext document.
func.func @softmax(%arg0: tensor<1024x64xf32>) -> tensor<1024x64xf32> {
  %0 = tensor.empty() : tensor<1024x64xf32>
  %1 = tensor.empty() : tensor<1024xf32>
  %4:4 = linalg_ext.softmax
    dimension(1)
    ins(%arg0 : tensor<1024x64xf32>) outs(%0, %1, %1, %1 : tensor<1024x64xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>) : tensor<1024x64xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
  return %4#0 : tensor<1024x64xf32>
}

func.func @topk(%values: tensor<1024x64xf32>) -> (tensor<1024x3xf32>, tensor<1024x3xi32>) {
  %ov = tensor.empty() : tensor<1024x3xf32>
  %oi = tensor.empty() : tensor<1024x3xi32>
  %0:2 = linalg_ext.topk
        dimension(1)
        ins(%values : tensor<1024x64xf32>)
        outs(%ov, %oi : tensor<1024x3xf32>, tensor<1024x3xi32>) {
        ^bb0(%a: f32, %b: f32):
          %c = arith.cmpf ogt, %a, %b : f32
          linalg_ext.yield %c : i1
        } -> tensor<1024x3xf32>, tensor<1024x3xi32>
  return %0#0, %0#1 : tensor<1024x3xf32>, tensor<1024x3xi32>
}

func.func @cumsum(%x: tensor<16x32xi32>) -> tensor<16x32xi32> {
  %acc = tensor.empty() : tensor<32xi32>
  %out = tensor.empty() : tensor<16x32xi32>
  %2:2 = linalg_ext.scan
    {__internal_linalg_transform__ = "__byteir_tile__"}
    dimension(0) inclusive(true)
    ins(%x : tensor<16x32xi32>) outs(%out, %acc : tensor<16x32xi32>, tensor<32xi32>) {
    ^bb0(%a : i32, %b : i32):
      %s = arith.addi %a, %b : i32
      linalg_ext.yield %s : i32
  } -> tensor<16x32xi32>, tensor<32xi32>
  return %2#0 : tensor<16x32xi32>
}

func.func @scatter_add(%src: tensor<2x3x32x64xf32>, %indices: tensor<100x2xi64>, %update: tensor<100x32x64xf32>) -> tensor<2x3x32x64xf32> {
  %res = linalg_ext.scatter
    ins(%indices, %update: tensor<100x2xi64>, tensor<100x32x64xf32>)
    outs(%src: tensor<2x3x32x64xf32>) {
      ^bb0(%a: f32, %b: f32):
        %0 = arith.addf %a, %b : f32
        linalg_ext.yield %0 : f32
      } -> tensor<2x3x32x64xf32>
  return %res : tensor<2x3x32x64xf32>
}

func.func @diag(%x: tensor<64xf32>) -> tensor<64x64xf32> {
  %0 = tensor.empty() : tensor<64x64xf32>
  %1 = linalg_ext.diag ins(%x : tensor<64xf32>) outs(%0 : tensor<64x64xf32>) : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}

func.func @bmm(%a: tensor<8x32x128xf32>, %b: tensor<8x64x128xf32>, %c: tensor<8x32x64xf32>) -> tensor<8x32x64xf32> {
  %res = linalg_ext.batch_matmul
                    ins(%a, %b: tensor<8x32x128xf32>, tensor<8x64x128xf32>)
                    outs(%c: tensor<8x32x64xf32>)
                    layout = "nt"
  return %res : tensor<8x32x64xf32>
}

func.func @norm(%arg0: tensor<8x32x128xf32>, %arg1: tensor<128xf32>, %arg2: tensor<128xf32>) -> tensor<8x32x128xf32> {
  %0 = tensor.empty() : tensor<8x32x128xf32>
  %1 = linalg_ext.layer_norm
                    axis([2])
                    epsilon(9.9999999747524271E-7)
                    ins(%arg0, %arg1, %arg2: tensor<8x32x128xf32>, tensor<128xf32>, tensor<128xf32>)
                    outs(%0: tensor<8x32x128xf32>) : tensor<8x32x128xf32>
  %2 = linalg_ext.alias(%1 : tensor<8x32x128xf32>) : tensor<8x32x128xf32>
  return %2 : tensor<8x32x128xf32>
}

func.func @upstream(%x: tensor<2x16x32xf32>, %d: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %1 = linalg.softmax dimension(2) ins(%x : tensor<2x16x32xf32>) outs(%d : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return %1 : tensor<2x16x32xf32>
}

transform.sequence failures(propagate) {
^bb0(%arg0: !pdl.operation):
  %0 = transform.structured.match ops{["linalg_ext.softmax"]} in %arg0
  %1, %loop = transform.structured.tile_ext %0 [4]
  %2 = transform.structured.match ops{["linalg_ext.topk"]} in %arg0
  %3, %loops:2 = transform.structured.tile_ext %2 [32, 24] {interchange = [0, 1, 2]}
}
