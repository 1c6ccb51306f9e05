module @jit_newton attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16xf32>) -> (tensor<16xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.divide %arg0, %0 : tensor<16xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %3 = stablehlo.add %1, %2 : tensor<16xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %5:4 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %arg0, %iterArg_2 = %3, %iterArg_3 = %4) : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xi32>
    cond {
      %6 = stablehlo.multiply %iterArg_2, %iterArg_2 : tensor<16xf32>
      %7 = stablehlo.multiply %6, %iterArg_2 : tensor<16xf32>
      %8 = stablehlo.subtract %7, %iterArg : tensor<16xf32>
      %9 = stablehlo.abs %8 : tensor<16xf32>
      %cst_4 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
      %10 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<16xf32>
      %11 = stablehlo.compare GT, %9, %10, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
      %c_5 = stablehlo.constant dense<20> : tensor<i32>
      %12 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<16xi32>
      %13 = stablehlo.compare LT, %iterArg_3, %12, SIGNED : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi1>
      %c_6 = stablehlo.constant dense<false> : tensor<i1>
      %14 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i1>) -> tensor<16xi1>
      %15 = stablehlo.compare NE, %13, %14, UNSIGNED : (tensor<16xi1>, tensor<16xi1>) -> tensor<16xi1>
      %16 = stablehlo.convert %15 : tensor<16xi1>
      %17 = stablehlo.and %11, %16 : tensor<16xi1>
      %c_7 = stablehlo.constant dense<false> : tensor<i1>
      %18 = stablehlo.reduce(%17 init: %c_7) applies stablehlo.or across dimensions = [0] : (tensor<16xi1>, tensor<i1>) -> tensor<i1>
      stablehlo.return %18 : tensor<i1>
    } do {
      %6 = stablehlo.multiply %iterArg_2, %iterArg_2 : tensor<16xf32>
      %7 = stablehlo.multiply %6, %iterArg_2 : tensor<16xf32>
      %8 = stablehlo.subtract %7, %iterArg_1 : tensor<16xf32>
      %cst_4 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
      %9 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<16xf32>
      %10 = stablehlo.multiply %9, %iterArg_2 : tensor<16xf32>
      %11 = stablehlo.multiply %10, %iterArg_2 : tensor<16xf32>
      %12 = stablehlo.divide %8, %11 : tensor<16xf32>
      %13 = stablehlo.subtract %iterArg_2, %12 : tensor<16xf32>
      %c_5 = stablehlo.constant dense<1> : tensor<i32>
      %14 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<16xi32>
      %15 = stablehlo.add %iterArg_3, %14 : tensor<16xi32>
      %16 = stablehlo.multiply %iterArg_2, %iterArg_2 : tensor<16xf32>
      %17 = stablehlo.multiply %16, %iterArg_2 : tensor<16xf32>
      %18 = stablehlo.subtract %17, %iterArg : tensor<16xf32>
      %19 = stablehlo.abs %18 : tensor<16xf32>
      %cst_6 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
      %20 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<16xf32>
      %21 = stablehlo.compare GT, %19, %20, FLOAT : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
      %c_7 = stablehlo.constant dense<20> : tensor<i32>
      %22 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<16xi32>
      %23 = stablehlo.compare LT, %iterArg_3, %22, SIGNED : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi1>
      %c_8 = stablehlo.constant dense<false> : tensor<i1>
      %24 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i1>) -> tensor<16xi1>
      %25 = stablehlo.compare NE, %23, %24, UNSIGNED : (tensor<16xi1>, tensor<16xi1>) -> tensor<16xi1>
      %26 = stablehlo.convert %25 : tensor<16xi1>
      %27 = stablehlo.and %21, %26 : tensor<16xi1>
      %28 = stablehlo.broadcast_in_dim %27, dims = [0] : (tensor<16xi1>) -> tensor<16xi1>
      %29 = stablehlo.select %28, %13, %iterArg_2 : tensor<16xi1>, tensor<16xf32>
      %30 = stablehlo.broadcast_in_dim %27, dims = [0] : (tensor<16xi1>) -> tensor<16xi1>
      %31 = stablehlo.select %30, %15, %iterArg_3 : tensor<16xi1>, tensor<16xi32>
      stablehlo.return %iterArg, %iterArg_1, %29, %31 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xi32>
    }
    return %5#2 : tensor<16xf32>
  }
}
