// Constructed: the transform-interpreter style (MLIR 19+): payload and a named
// sequence in one module, `tile_sizes [...]` without `=`, a match on op names.
module attributes {transform.with_named_sequence} {
  func.func @mm(%a: tensor<128x100xf32>, %b: tensor<100x96xf32>, %c: tensor<128x96xf32>) -> tensor<128x96xf32> {
    %0 = linalg.matmul ins(%a, %b : tensor<128x100xf32>, tensor<100x96xf32>)
                       outs(%c : tensor<128x96xf32>) -> tensor<128x96xf32>
    return %0 : tensor<128x96xf32>
  }
  transform.named_sequence @__transform_main(%arg1: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.matmul"]} in %arg1 : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:2 = transform.structured.tile_using_for %0 tile_sizes [8, 0, 6] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %t2, %l2 = transform.structured.tile_using_forall %0 tile_sizes [-1, 4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t3, %l3:4 = transform.structured.tile_using_for %0 tile_sizes [8, 8, 4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
