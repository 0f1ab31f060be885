# corrtrack plot: render with `gnuplot <this file>` (gnuplot >= 5.0)
$p0s0 << EOD
0 864.0913332
1 900.5742832
2 904.7126158
3 913.9701913
4 908.6091642
5 905.0728676
EOD
$p0s1 << EOD
0 1524.432965
1 1987.704335
2 2189.494559
3 2245.475581
4 2266.488155
5 2301.497115
EOD
$p0s2 << EOD
0 1541.31705
1 2006.006697
2 2204.221842
3 2255.78078
4 2275.031008
5 2309.904092
EOD
$p0s3 << EOD
0 2811.847946
1 6014.674689
2 8248.449063
3 9510.46144
4 10488.8632
5 11674.41887
EOD
$p0s4 << EOD
0 4531.23399
1 9603.905299
2 14320.22417
3 14579.39956
4 16159.41905
5 16713.36078
EOD
$p0s5 << EOD
0 1042.482999
1 1911.393788
2 2438.140953
3 2422.302197
4 2547.078286
5 2597.932131
EOD
$p0s6 << EOD
0 974.3201453
1 1825.91969
2 2389.537121
3 2369.867499
4 2533.464335
5 2591.667673
EOD
$p0s7 << EOD
0 1591.509156
1 3812.237283
2 7403.812765
3 6941.455458
4 9129.379128
5 9999.134211
EOD
$p0s8 << EOD
0 185.9788894
1 528.9166163
2 956.6765147
3 987.5488314
4 1199.567472
5 1277.546944
EOD
$p0s9 << EOD
0 670.0886349
1 2642.774531
2 10401.89527
3 11634.24666
4 39658.24517
5 144213.1792
EOD
$p0s10 << EOD
0 3747.419382
1 7773.275614
2 10991.49815
3 11523.26563
4 12554.17041
5 13381.91166
EOD
$p0s11 << EOD
0 4659.816041
1 9733.493207
2 14421.18474
3 14672.4436
4 16190.26419
5 16710.32825
EOD
$p0s12 << EOD
0 3991.539012
1 9463.906593
2 14725.95276
3 14461.07275
4 16291.73926
5 15528.24765
EOD
$p0s13 << EOD
0 1308.253015
1 2959.088375
2 5087.039809
3 4843.61659
4 5934.959177
5 6353.582658
EOD
$p0s14 << EOD
0 1590.276135
1 3828.874602
2 7394.315443
3 6941.793586
4 9122.833072
5 9994.165346
EOD
$p0s15 << EOD
0 1485.811754
1 3608.403903
2 7017.480389
3 6303.019856
4 8824.444635
5 10136.88881
EOD
$p1s0 << EOD
0 1.855537721
1 15.03364999
2 83.32819648
3 92.51581525
4 387.1406771
5 588.5787723
EOD
$p1s1 << EOD
0 1.939597322
1 18.59551752
2 122.9090916
3 144.3340428
4 589.3879285
5 1384.215993
EOD
$p1s2 << EOD
0 1.976068371
1 19.21058478
2 125.7089679
3 144.7002065
4 598.5802859
5 1405.239531
EOD
$p1s3 << EOD
0 2.164793924
1 25.5859029
2 223.4710713
3 281.65926
4 1464.957347
5 6358.388146
EOD
$p1s4 << EOD
0 1.939597322
1 22.30985971
2 191.0954055
3 233.2760745
4 1128.50222
5 5349.112158
EOD
$p1s5 << EOD
0 0.8844682488
1 10.72906387
2 90.49531657
3 105.4594752
4 533.6459966
5 1579.86868
EOD
$p1s6 << EOD
0 0.896819255
1 10.89681044
2 160.1895745
3 193.5610905
4 1134.815147
5 1825.77942
EOD
$p1s7 << EOD
0 1.019400335
1 11.40314141
2 136.9807569
3 140.6559861
4 965.7891503
5 3919.912711
EOD
$p1s8 << EOD
0 1.195449845
1 17.63562831
2 201.4903081
3 252.5579308
4 873.3284329
5 1227.99311
EOD
$p1s9 << EOD
0 0.4885883406
1 7.608733708
2 120.2312132
3 155.8360686
4 1761.826289
5 23067.59001
EOD
$p1s10 << EOD
0 2.32595573
1 27.43936991
2 236.5704344
3 284.7054875
4 1406.436441
5 6047.404642
EOD
$p1s11 << EOD
0 2.223077041
1 24.40336154
2 196.9410084
3 244.7896906
4 1138.150118
5 5352.075307
EOD
$p1s12 << EOD
0 1.814756617
1 19.62162141
2 149.1450674
3 179.9242913
4 820.1956153
5 3682.17437
EOD
$p1s13 << EOD
0 1.087488237
1 13.03216161
2 151.4845963
3 165.4016495
4 1132.401912
5 3665.213005
EOD
$p1s14 << EOD
0 0.9931271344
1 11.5085865
2 139.166237
3 142.2935599
4 954.1088454
5 3916.734731
EOD
$p1s15 << EOD
0 0.7344345642
1 7.11183665
2 59.11674807
3 62.17587209
4 323.9370442
5 1467.373432
EOD
if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
  set terminal pngcairo size 1800,560 noenhanced font 'sans,10'
} else {
  set terminal png size 1800,560 noenhanced
}
set output 'bench.png'
set multiplot layout 1,2 title 'corrtrack bench: NVIDIA H200, 1920x1080'
set title 'full-frame search'
set xlabel 'template (w x h)'
set ylabel 'effective GMAC/s (template px x positions / time)'
unset logscale
set logscale y
set xrange [-0.3:5.3]
set yrange [*:*]
set xtics ('8x8' 0, '16x16' 1, '32x32' 2, '48x24' 3, '64x64' 4, '128x128' 5)
set grid
set key outside right top
plot $p0s0 using 1:2 with linespoints lt 1 dt 1 lw 2 pt 7 ps 1.2 title 'cuda_tex', \
     $p0s1 using 1:2 with linespoints lt 2 dt 1 lw 2 pt 5 ps 1.2 title 'cuda_shared', \
     $p0s2 using 1:2 with linespoints lt 3 dt 1 lw 2 pt 9 ps 1.2 title 'cuda_shared_u4', \
     $p0s3 using 1:2 with linespoints lt 4 dt 1 lw 2 pt 11 ps 1.2 title 'cuda_dp4a', \
     $p0s4 using 1:2 with linespoints lt 5 dt 1 lw 2 pt 13 ps 1.2 title 'cuda_dp4a_ilp', \
     $p0s5 using 1:2 with linespoints lt 6 dt 1 lw 2 pt 15 ps 1.2 title 'cuda_shuffle', \
     $p0s6 using 1:2 with linespoints lt 7 dt 1 lw 2 pt 4 ps 1.2 title 'cuda_shuffle_split', \
     $p0s7 using 1:2 with linespoints lt 8 dt 1 lw 2 pt 6 ps 1.2 title 'cuda_shuffle_grouped', \
     $p0s8 using 1:2 with linespoints lt 1 dt 2 lw 2 pt 8 ps 1.2 title 'cuda_warp_per_overlap', \
     $p0s9 using 1:2 with linespoints lt 2 dt 2 lw 2 pt 10 ps 1.2 title 'cuda_fft', \
     $p0s10 using 1:2 with linespoints lt 3 dt 2 lw 2 pt 12 ps 1.2 title 'cuda_dp4a_ilp_c2', \
     $p0s11 using 1:2 with linespoints lt 4 dt 2 lw 2 pt 14 ps 1.2 title 'cuda_dp4a_ilp_c4', \
     $p0s12 using 1:2 with linespoints lt 5 dt 2 lw 2 pt 7 ps 1.2 title 'cuda_dp4a_ilp_c8', \
     $p0s13 using 1:2 with linespoints lt 6 dt 2 lw 2 pt 5 ps 1.2 title 'cuda_shuffle_grouped_r2', \
     $p0s14 using 1:2 with linespoints lt 7 dt 2 lw 2 pt 9 ps 1.2 title 'cuda_shuffle_grouped_r4', \
     $p0s15 using 1:2 with linespoints lt 8 dt 2 lw 2 pt 11 ps 1.2 title 'cuda_shuffle_grouped_r8'
set title 'tracking window (3x template side)'
set xlabel 'template (w x h)'
set ylabel 'effective GMAC/s (template px x positions / time)'
unset logscale
set logscale y
set xrange [-0.3:5.3]
set yrange [*:*]
set xtics ('8x8' 0, '16x16' 1, '32x32' 2, '48x24' 3, '64x64' 4, '128x128' 5)
set grid
set key outside right top
plot $p1s0 using 1:2 with linespoints lt 1 dt 1 lw 2 pt 7 ps 1.2 title 'cuda_tex', \
     $p1s1 using 1:2 with linespoints lt 2 dt 1 lw 2 pt 5 ps 1.2 title 'cuda_shared', \
     $p1s2 using 1:2 with linespoints lt 3 dt 1 lw 2 pt 9 ps 1.2 title 'cuda_shared_u4', \
     $p1s3 using 1:2 with linespoints lt 4 dt 1 lw 2 pt 11 ps 1.2 title 'cuda_dp4a', \
     $p1s4 using 1:2 with linespoints lt 5 dt 1 lw 2 pt 13 ps 1.2 title 'cuda_dp4a_ilp', \
     $p1s5 using 1:2 with linespoints lt 6 dt 1 lw 2 pt 15 ps 1.2 title 'cuda_shuffle', \
     $p1s6 using 1:2 with linespoints lt 7 dt 1 lw 2 pt 4 ps 1.2 title 'cuda_shuffle_split', \
     $p1s7 using 1:2 with linespoints lt 8 dt 1 lw 2 pt 6 ps 1.2 title 'cuda_shuffle_grouped', \
     $p1s8 using 1:2 with linespoints lt 1 dt 2 lw 2 pt 8 ps 1.2 title 'cuda_warp_per_overlap', \
     $p1s9 using 1:2 with linespoints lt 2 dt 2 lw 2 pt 10 ps 1.2 title 'cuda_fft', \
     $p1s10 using 1:2 with linespoints lt 3 dt 2 lw 2 pt 12 ps 1.2 title 'cuda_dp4a_ilp_c2', \
     $p1s11 using 1:2 with linespoints lt 4 dt 2 lw 2 pt 14 ps 1.2 title 'cuda_dp4a_ilp_c4', \
     $p1s12 using 1:2 with linespoints lt 5 dt 2 lw 2 pt 7 ps 1.2 title 'cuda_dp4a_ilp_c8', \
     $p1s13 using 1:2 with linespoints lt 6 dt 2 lw 2 pt 5 ps 1.2 title 'cuda_shuffle_grouped_r2', \
     $p1s14 using 1:2 with linespoints lt 7 dt 2 lw 2 pt 9 ps 1.2 title 'cuda_shuffle_grouped_r4', \
     $p1s15 using 1:2 with linespoints lt 8 dt 2 lw 2 pt 11 ps 1.2 title 'cuda_shuffle_grouped_r8'
unset multiplot
set output
