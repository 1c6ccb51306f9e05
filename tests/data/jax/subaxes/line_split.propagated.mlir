module @jit_line_split attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["d"=8]> {stablehlo.mesh = {axes = [{name = "d", size = 8 : i64}]}}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) -> (tensor<2x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"d":(1)2}, {"d":(2)4}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=2, j=4, k=16}>} : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
    %1 = stablehlo.sine %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"d":(1)2}, {"d":(2)4}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, j, k]) {i=2, j=4, k=16}>} : tensor<2x4x16xf32>
    %2 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%1 init: %2) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"d":(1)2}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [])->([i, k]) {i=2, j=4, k=16} reduction={j}>} : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x16xf32>
    return %3 : tensor<2x16xf32>
  }
}
