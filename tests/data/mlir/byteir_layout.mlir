// ByteIR's own test layout (its linalg-ext ops tests put a function's `{` on the line
// after its signature and spread an op's `ins`/`outs`/`layout` over lines). Written
// for hlo-lsp's tests in that layout; before the grammar-based reader, every op of
// such a function was dropped without a diagnostic.
func.func @scatter_add(%src: tensor<2x3x32x64xf32>, %indices: tensor<100x2xi64>, %update: tensor<100x32x64xf32>) -> tensor<2x3x32x64xf32>
{
  %res = linalg_ext.scatter
    ins(%indices, %update : tensor<100x2xi64>, tensor<100x32x64xf32>)
    outs(%src : tensor<2x3x32x64xf32>) {
    ^bb0(%arg0: f32, %arg1: f32):
      %0 = arith.addf %arg0, %arg1 : f32
      linalg_ext.yield %0 : f32
  } -> tensor<2x3x32x64xf32>
  return %res : tensor<2x3x32x64xf32>
}

func.func @batch_matmul_3d(%ta3: tensor<8x32x128xf32>, %tb3: tensor<8x128x64xf32>, %tc3: tensor<8x32x64xf32>) -> (tensor<8x32x64xf32>)
{
  %res = linalg_ext.batch_matmul
                    ins(%ta3, %tb3: tensor<8x32x128xf32>, tensor<8x128x64xf32>)
                    outs(%tc3: tensor<8x32x64xf32>)
                    layout = "nn"
  return %res : tensor<8x32x64xf32>
}
