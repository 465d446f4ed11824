# native.cmake - Every kernel of kernels.def as a native static library for tests/kernels and
# bench/kernels_bench; the JIT uses their LLVM bitcode instead. Each ISA file gets its ISA's flags
# whatever the build machine: the tests check the CPU at run time before calling a variant. The
# scalar files keep the bitcode's rounding (-ffp-contract=off), so tests see what the JIT runs.
set(GLOWC_FAST_FAMILIES conv gemm pool layout)
# The int8 elementwise, pooling and depthwise kernels (kernels/q*).
list(APPEND GLOWC_FAST_FAMILIES qeltwise qpool qdwconv)
set(GLOWC_KERNELS_AVX512 "")
set(GLOWC_KERNELS_AVX2 "")
# The kernel tests run them at -O1, in both trees: they check code paths and results, which
# do not depend on the level (intrinsics, no contraction of scalar code), and gcc -O3 was most
# of the build: 113 s of the release tree's 203 s of C compiles on an AVX2 host
# (gemm_avx512.c alone 22.9 s at -O3 against 0.9 s at -O1; conv_avx2.c 18 s against 10 s;
# with ASan + UBSan conv_avx2.c took 38 s). The benchmarks (kernels_bench, qconv_bench) time
# the kernels as machine code comparable to the JIT's, so they link their own -O3 copy,
# glowc_kernels_native_bench, built only with them (`cmake --build build/release --target
# kernels_bench`). The level is a generator expression on the target that compiles the file.
set(GLOWC_NATIVE_OPT "$<IF:$<BOOL:$<TARGET_PROPERTY:GLOWC_NATIVE_BENCH>>,-O3,-O1>")
foreach(fam ${GLOWC_FAST_FAMILIES})
  list(APPEND GLOWC_KERNELS_AVX512 ${CMAKE_SOURCE_DIR}/kernels/${fam}/${fam}_avx512.c)
  list(APPEND GLOWC_KERNELS_AVX2 ${CMAKE_SOURCE_DIR}/kernels/${fam}/${fam}_avx2.c)
endforeach()
# The Winograd F(4x4,3x3) convolution (kernels/winograd, files named wino_<isa>.c).
list(APPEND GLOWC_KERNELS_AVX512 ${CMAKE_SOURCE_DIR}/kernels/winograd/wino_avx512.c)
list(APPEND GLOWC_KERNELS_AVX2 ${CMAKE_SOURCE_DIR}/kernels/winograd/wino_avx2.c)
set_source_files_properties(${GLOWC_KERNELS_AVX512} PROPERTIES
  COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mfma;${GLOWC_NATIVE_OPT}")
set_source_files_properties(${GLOWC_KERNELS_AVX2} PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;${GLOWC_NATIVE_OPT}")
# The int8 convolution (kernels/qconv), each ISA file with its bitcode's flags (kernels.cmake).
set(GLOWC_KERNELS_VNNI ${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avx512vnni.c
    ${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avxvnni.c
    ${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avx2.c
    ${CMAKE_SOURCE_DIR}/kernels/qconv/qwino_avx2.c
    ${CMAKE_SOURCE_DIR}/kernels/qconv/qconv7_avx2.c)
set_source_files_properties(${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avx2.c
  ${CMAKE_SOURCE_DIR}/kernels/qconv/qwino_avx2.c ${CMAKE_SOURCE_DIR}/kernels/qconv/qconv7_avx2.c
  PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;${GLOWC_NATIVE_OPT}")
set_source_files_properties(${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avx512vnni.c PROPERTIES
  COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx2;-mfma;${GLOWC_NATIVE_OPT}")
set_source_files_properties(${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avxvnni.c PROPERTIES
  COMPILE_OPTIONS "-mavx2;-mfma;-mavxvnni;${GLOWC_NATIVE_OPT}")
file(GLOB GLOWC_KERNELS_SCALAR CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/*/*_scalar.c)
set_source_files_properties(${GLOWC_KERNELS_SCALAR} PROPERTIES
  COMPILE_OPTIONS "-ffp-contract=off;-fno-math-errno;${GLOWC_NATIVE_OPT}")
set(GLOWC_KERNELS_NATIVE ${GLOWC_KERNELS_AVX512} ${GLOWC_KERNELS_AVX2} ${GLOWC_KERNELS_VNNI}
    ${GLOWC_KERNELS_SCALAR})
set(GLOWC_NATIVE_DEFS "")
# The sanitizer tree runs its tests on the machine that builds it, and the kernel tests skip
# the rows of an ISA this CPU lacks: it leaves those files out (their rows' addresses are NULL,
# kernels_test.h). Instrumented, they were most of its build: gcc -O3 with ASan + UBSan takes
# 100 s over qconv_avx512vnni.c alone, about 260 s over the AVX-512 and AVX-VNNI files on an
# AVX2 host. The release tree builds every file on every machine.
if(GLOWC_SANITIZE AND EXISTS /proc/cpuinfo)
  file(READ /proc/cpuinfo GLOWC_CPUINFO)
  foreach(flag avx512f avx512bw avx512vl avx512dq)
    if(NOT GLOWC_CPUINFO MATCHES " ${flag}[ \n]")
      set(GLOWC_HOST_NO_AVX512 ON)
    endif()
  endforeach()
  if(GLOWC_HOST_NO_AVX512 OR NOT GLOWC_CPUINFO MATCHES " avx512_vnni[ \n]")
    list(REMOVE_ITEM GLOWC_KERNELS_NATIVE ${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avx512vnni.c)
    list(APPEND GLOWC_NATIVE_DEFS GLOWC_NATIVE_NO_AVX512VNNI)
  endif()
  if(GLOWC_HOST_NO_AVX512)
    list(REMOVE_ITEM GLOWC_KERNELS_NATIVE ${GLOWC_KERNELS_AVX512})
    list(APPEND GLOWC_NATIVE_DEFS GLOWC_NATIVE_NO_AVX512)
  endif()
  if(NOT GLOWC_CPUINFO MATCHES " avx_vnni[ \n]")
    list(REMOVE_ITEM GLOWC_KERNELS_NATIVE ${CMAKE_SOURCE_DIR}/kernels/qconv/qconv_avxvnni.c)
    list(APPEND GLOWC_NATIVE_DEFS GLOWC_NATIVE_NO_AVXVNNI)
  endif()
  message(STATUS "glowc: native kernels left out of the sanitizer tree: ${GLOWC_NATIVE_DEFS}")
endif()
add_library(glowc_kernels_native STATIC ${GLOWC_KERNELS_NATIVE})
target_include_directories(glowc_kernels_native PUBLIC ${CMAKE_SOURCE_DIR}/kernels)
target_compile_definitions(glowc_kernels_native PUBLIC ${GLOWC_NATIVE_DEFS})
target_link_libraries(glowc_kernels_native PUBLIC m)

# Benchmarks, not tests (release tree only: timings under the sanitizers mean nothing), built
# on request with the -O3 copy of the kernels (above).
if(NOT GLOWC_SANITIZE)
  add_library(glowc_kernels_native_bench STATIC EXCLUDE_FROM_ALL ${GLOWC_KERNELS_NATIVE})
  set_target_properties(glowc_kernels_native_bench PROPERTIES GLOWC_NATIVE_BENCH ON)
  target_include_directories(glowc_kernels_native_bench PUBLIC ${CMAKE_SOURCE_DIR}/kernels)
  target_compile_definitions(glowc_kernels_native_bench PUBLIC ${GLOWC_NATIVE_DEFS})
  target_link_libraries(glowc_kernels_native_bench PUBLIC m)

  # kernels_bench: GFLOP/s of the ResNet-50 / VGG-19 conv layers at one thread; qconv_bench:
  # the int8 convolution against the f32 one (GOP/s and ratio), at one thread.
  # Their sources are compiled by every release build (against the -O1 library's headers and
  # definitions), so a kernel signature change cannot break them unnoticed; only the link
  # against the -O3 copy waits for a request.
  foreach(b kernels_bench qconv_bench)
    add_library(${b}_main OBJECT ${CMAKE_SOURCE_DIR}/bench/${b}.c)
    target_link_libraries(${b}_main PRIVATE glowc_kernels_native glowc)
    add_executable(${b} EXCLUDE_FROM_ALL $<TARGET_OBJECTS:${b}_main>)
    target_link_libraries(${b} PRIVATE glowc_kernels_native_bench glowc)
  endforeach()
endif()
