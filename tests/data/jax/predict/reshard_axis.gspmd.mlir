module @jit_reshard_axis attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x32xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}) -> (tensor<32x32xf32> {jax.result_info = "result", mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}) {
    %0 = stablehlo.sine %arg0 : tensor<32x32xf32>
    return %0 : tensor<32x32xf32>
  }
}
