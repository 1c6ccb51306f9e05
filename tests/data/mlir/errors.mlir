// Constructed: one mistake per op.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @errors(%a: tensor<4x8xf32>, %b: tensor<4x9xf32>, %v: tensor<4xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  // Loop d1 is 8 from %a but 9 from %b.
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<4x9xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x8xf32>
  // #id has 2 results, %v has rank 1.
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v : tensor<4xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x8xf32>
  // Reads row d0 + 1 of a 4-row tensor.
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + 1, d1)>, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x8xf32>
  // #nope is not defined.
  %4 = linalg.generic {indexing_maps = [#nope, #row], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf32>) outs(%v : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %1 : tensor<4x8xf32>
}
