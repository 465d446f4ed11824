# kernels.cmake - Builds the kernel library (kernels/**/*.c) into one LLVM bitcode module,
# embeds it in libglowc as a byte array, and links libglowc against LLVM 14.
#
# Kernels are compiled by clang-14 *without* LLVM's optimization passes
# (-O2 -Xclang -disable-llvm-passes): the CPU backend inlines them into generated code with
# constant shapes and runs the O3 pipeline for the host CPU afterwards, so vectorizing them now
# for generic x86-64 would only get in the way (docs/cpu-backend.md). -ffp-contract=off keeps
# the scalar kernels' a*b+c exactly as written (the interpreter's rounding); the AVX files ask
# for fused multiply-adds explicitly through intrinsics. -fno-math-errno lets sqrtf & co become
# instructions. Each ISA file (<family>_avx2.c, <family>_avx512.c, <family>_avx512vnni.c,
# <family>_avxvnni.c) gets its ISA's flags.
find_program(GLOWC_CLANG14 clang-14 REQUIRED)
find_program(GLOWC_LLVM_LINK14 llvm-link-14 REQUIRED)
find_program(GLOWC_LLVM_CONFIG14 llvm-config-14 REQUIRED)

set(GLOWC_KERNEL_FLAGS -std=c11 -O2 -Xclang -disable-llvm-passes -emit-llvm -c
    -ffp-contract=off -fno-math-errno -fno-stack-protector -Wall -Wextra -Wno-unused-parameter
    -I${CMAKE_SOURCE_DIR}/kernels)
if(GLOWC_WERROR)
  list(APPEND GLOWC_KERNEL_FLAGS -Werror)
endif()
set(GLOWC_KERNEL_FLAGS_avx2 -mavx2 -mfma -mf16c)
set(GLOWC_KERNEL_FLAGS_avx512 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mf16c)
# The int8 kernels' VNNI variants (kernels/qconv): AVX-512 VNNI, and the VEX AVX-VNNI.
set(GLOWC_KERNEL_FLAGS_avx512vnni -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni -mavx2
    -mfma)
set(GLOWC_KERNEL_FLAGS_avxvnni -mavx2 -mfma -mavxvnni)

file(GLOB_RECURSE GLOWC_KERNEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/*.c)
file(GLOB_RECURSE GLOWC_KERNEL_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/*.h
     ${CMAKE_SOURCE_DIR}/kernels/*.def)
set(GLOWC_KERNEL_BC_DIR ${CMAKE_BINARY_DIR}/kernels)
file(MAKE_DIRECTORY ${GLOWC_KERNEL_BC_DIR})
set(GLOWC_KERNEL_BCS "")
foreach(src ${GLOWC_KERNEL_SOURCES})
  get_filename_component(base ${src} NAME_WE)
  if(base MATCHES "_neon$") # aarch64 only: cross.cmake
    continue()
  endif()
  set(isa_flags "")
  if(base MATCHES "_avx512$")
    set(isa_flags ${GLOWC_KERNEL_FLAGS_avx512})
  elseif(base MATCHES "_avx2$")
    set(isa_flags ${GLOWC_KERNEL_FLAGS_avx2})
  elseif(base MATCHES "_avx512vnni$")
    set(isa_flags ${GLOWC_KERNEL_FLAGS_avx512vnni})
  elseif(base MATCHES "_avxvnni$")
    set(isa_flags ${GLOWC_KERNEL_FLAGS_avxvnni})
  endif()
  set(bc ${GLOWC_KERNEL_BC_DIR}/${base}.bc)
  add_custom_command(
    OUTPUT ${bc}
    COMMAND ${GLOWC_CLANG14} ${GLOWC_KERNEL_FLAGS} ${isa_flags} ${src} -o ${bc}
    DEPENDS ${src} ${GLOWC_KERNEL_HEADERS}
    COMMENT "clang-14 bitcode ${base}.c"
    VERBATIM)
  list(APPEND GLOWC_KERNEL_BCS ${bc})
endforeach()

set(GLOWC_KERNELS_BC ${GLOWC_KERNEL_BC_DIR}/kernels.bc)
set(GLOWC_KERNELS_C ${GEN_DIR}/kernels_bc.c)
add_custom_command(
  OUTPUT ${GLOWC_KERNELS_BC}
  COMMAND ${GLOWC_LLVM_LINK14} ${GLOWC_KERNEL_BCS} -o ${GLOWC_KERNELS_BC}
  DEPENDS ${GLOWC_KERNEL_BCS}
  COMMENT "llvm-link-14 kernels.bc"
  VERBATIM)
add_custom_command(
  OUTPUT ${GLOWC_KERNELS_C}
  COMMAND ${CMAKE_COMMAND} -DIN=${GLOWC_KERNELS_BC} -DOUT=${GLOWC_KERNELS_C}
          -P ${CMAKE_SOURCE_DIR}/kernels/embed.cmake
  DEPENDS ${GLOWC_KERNELS_BC} ${CMAKE_SOURCE_DIR}/kernels/embed.cmake
  COMMENT "embedding kernels.bc"
  VERBATIM)
target_sources(glowc PRIVATE ${GLOWC_KERNELS_C})
# The scalar and NEON kernels for aarch64 bundles.
include(${CMAKE_SOURCE_DIR}/kernels/cross.cmake)

# LLVM 14 as the shared libLLVM-14.so: every test program links libglowc, and the static
# component libraries would make each of them large and slow to link.
execute_process(COMMAND ${GLOWC_LLVM_CONFIG14} --includedir
                OUTPUT_VARIABLE GLOWC_LLVM_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${GLOWC_LLVM_CONFIG14} --libdir
                OUTPUT_VARIABLE GLOWC_LLVM_LIBDIR OUTPUT_STRIP_TRAILING_WHITESPACE)
find_library(GLOWC_LLVM_LIB NAMES LLVM-14 PATHS ${GLOWC_LLVM_LIBDIR} NO_DEFAULT_PATH REQUIRED)
target_include_directories(glowc SYSTEM PRIVATE ${GLOWC_LLVM_INCLUDE})
find_package(Threads REQUIRED)
target_link_libraries(glowc PUBLIC ${GLOWC_LLVM_LIB} Threads::Threads)
target_include_directories(glowc PRIVATE ${CMAKE_SOURCE_DIR}/kernels)
