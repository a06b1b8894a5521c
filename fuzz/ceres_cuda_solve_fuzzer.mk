# Builds ceres_cuda_solve_fuzzer (scripts/fuzz.sh runs it: make -f fuzz/ceres_cuda_solve_fuzzer.mk
# BUILD=build-fuzz CXX=clang++ -j1 or -j2). The harness calls ceres_cuda::Solve, which needs all of ceres_cuda and
# linalg_cuda, .cu files included; their sources are read from the modules' CMakeLists.txt, so a
# source added there is built here too.
# - .cpp: clang++ with ASan, UBSan and libFuzzer's coverage (-fsanitize=fuzzer-no-link), -O1.
# - .cu: nvcc with clang++ as its host compiler (nvcc takes clang 3.3 to 20) and the same flags
#   through -Xcompiler, so the host code of the .cu files is instrumented by the same compiler and
#   sanitizer runtime as the rest. Device code is compiled to PTX for sm_90 only (no ptxas, no SASS):
#   without a CUDA device the library runs its CPU engines and no kernel is launched; with one, the
#   driver would compile the PTX.
# Objects and dependency files go to $(BUILD)/ceres_cuda_solve_fuzzer.objects/, rebuilt only when a
# source, a header it includes or the flags change.
BUILD ?= build-fuzz
# make's own default for CXX is g++: clang++ unless the caller names a compiler.
ifeq ($(origin CXX),default)
CXX := clang++
endif
NVCC ?= /usr/local/cuda/bin/nvcc
CUDA_HOME ?= /usr/local/cuda
OBJ := $(BUILD)/ceres_cuda_solve_fuzzer.objects
TARGET := $(BUILD)/ceres_cuda_solve_fuzzer

# The paths between "cuda_solvers_add_module(<name> SOURCES" and the line of its closing parenthesis
# (a variable: make would take a literal one for the end of $(shell ...)).
closing := )
module_sources = $(addprefix $(1)/,$(shell sed -n \
  '/^cuda_solvers_add_module/,/^$(closing)/ { /^[[:space:]]*src\//p }' $(1)/CMakeLists.txt))
SOURCES := $(call module_sources,linalg_cuda) $(call module_sources,ceres_cuda)
OBJECTS := $(SOURCES:%=$(OBJ)/%.o) $(OBJ)/fuzz/ceres_cuda_solve_fuzzer.cpp.o

INCLUDES := -Ifuzz -Ilinalg_cuda/include -Ilinalg_cuda/internal/include -Iceres_cuda/include \
            -isystem $(CUDA_HOME)/include -isystem /usr/include/eigen3
# glog's definitions as Ceres' CMake target gives them to the library's build.
DEFINES := -DGFLAGS_IS_A_DLL=0 -DGLOG_CUSTOM_PREFIX_SUPPORT
SANITIZERS := -fsanitize=address,undefined -fno-sanitize-recover=all
# Line tables only (-gline-tables-only): the sanitizers' stacks name file and line, and a file compiles
# about 15% faster than with full debug information.
CXXFLAGS := -std=c++17 -gline-tables-only -O1 -fno-omit-frame-pointer -fopenmp $(SANITIZERS) \
            -fsanitize=fuzzer-no-link
# nvcc splits -Xcompiler arguments at commas: one flag each.
NVCCFLAGS := -ccbin $(CXX) -std=c++17 -O1 --expt-relaxed-constexpr -gencode arch=compute_90,code=compute_90 \
             -Xcompiler=-gline-tables-only -Xcompiler=-fno-omit-frame-pointer -Xcompiler=-fopenmp \
             -Xcompiler=-fsanitize=address -Xcompiler=-fsanitize=undefined -Xcompiler=-fno-sanitize-recover=all \
             -Xcompiler=-fsanitize=fuzzer-no-link -Xcudafe=--diag_suppress=20012
LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcusolver -lcusparse -lcublas -lcudart \
        -lceres -lglog -lgflags -lbz2

$(TARGET): $(OBJECTS)
	@echo "  LINK $@"
	@$(CXX) -fopenmp $(SANITIZERS) -fsanitize=fuzzer $^ $(LIBS) -o $@

# The flags are a prerequisite of every object: a file rewritten only when they change.
FLAGS_STAMP := $(OBJ)/flags
ALL_FLAGS := $(CXX) $(CXXFLAGS) $(NVCC) $(NVCCFLAGS) $(INCLUDES) $(DEFINES)
$(shell mkdir -p $(OBJ) && echo '$(ALL_FLAGS)' > $(FLAGS_STAMP).new && \
        (cmp -s $(FLAGS_STAMP).new $(FLAGS_STAMP) || mv $(FLAGS_STAMP).new $(FLAGS_STAMP)); rm -f $(FLAGS_STAMP).new)

$(OBJ)/%.cpp.o: %.cpp $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CXX  $<"
	@$(CXX) $(CXXFLAGS) $(INCLUDES) $(DEFINES) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

$(OBJ)/%.cu.o: %.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  NVCC $<"
	@$(NVCC) $(NVCCFLAGS) $(INCLUDES) $(DEFINES) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

-include $(OBJECTS:.o=.d)
