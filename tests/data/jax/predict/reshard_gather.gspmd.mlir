module @jit_reshard_gather attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x32xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> (tensor<32x32xf32> {jax.result_info = "result", mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.sine %arg0 : tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
}
