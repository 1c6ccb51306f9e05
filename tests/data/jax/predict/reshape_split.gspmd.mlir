module @jit_reshape_split attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> (tensor<2x16xf32> {jax.result_info = "result", mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
    %1 = stablehlo.sine %0 : tensor<2x4x16xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x16xf32>
    return %2 : tensor<2x16xf32>
  }
}
