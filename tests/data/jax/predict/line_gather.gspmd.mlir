module @jit_line_gather attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> (tensor<64x8xf32> {jax.result_info = "result", mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.tanh %arg0 : tensor<64x8xf32>
    return %0 : tensor<64x8xf32>
  }
}
