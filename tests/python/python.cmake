# The Python binding (python/, docs/python.md), when this build has it (INGOT_PYTHON). The tests
# import the module from the build tree (PYTHONPATH), so CI needs no pip install per run; one
# test checks the pip install path itself. They run INGOT_TEST_PYTHON (tests/CMakeLists.txt) and
# skip (77) when it has no PyTorch; python.binding.abi3 loads the module into INGOT_PYTHON_OTHER.
if(INGOT_HAVE_PYTHON)
  set(_py_env PYTHONPATH=${PROJECT_BINARY_DIR}/python)
  set(_py_dir ${INGOT_TESTS}/python)
  set(_py ${INGOT_TEST_PYTHON})
  # Another CPython (3.12 or later) to load the abi3 module built here: pyenv's versions first,
  # then the system's (not PATH, whose pyenv shims may name a version not installed).
  file(GLOB _py_other_dirs $ENV{HOME}/.pyenv/versions/3.1[2-9]*/bin)
  find_program(INGOT_PYTHON_OTHER NAMES python3.12 python3.13 python3.14 HINTS ${_py_other_dirs}
               NO_SYSTEM_ENVIRONMENT_PATH
               DOC "Another CPython (>= 3.12) that python.binding.abi3 loads the module into")
  ingot_add_test(NAME python.binding.abi3 LABELS python TIMEOUT 180 ENV ${_py_env}
                 COMMAND ${_py} ${_py_dir}/test_abi3.py ${INGOT_PYTHON_OTHER}
                         ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR}/python-abi3)
  ingot_add_test(NAME python.binding.single LABELS python TIMEOUT 180 ENV ${_py_env}
                 COMMAND ${_py} ${_py_dir}/test_single.py
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR}/python-single)
  # ingot.simulate(): ingot-sim's library from Python (no MPI, no init), its errors named.
  ingot_add_test(NAME python.binding.sim LABELS python TIMEOUT 60
                 ENV ${_py_env} INGOT_CACHE_BYTES=32MiB
                 COMMAND ${_py} ${_py_dir}/test_sim.py ${CMAKE_CURRENT_BINARY_DIR}/python-sim)
  # The launch check under torchrun's variables (two singletons refused; WORLD_SIZE=1 not).
  ingot_add_test(NAME python.binding.launch LABELS python TIMEOUT 120 ENV ${_py_env}
                 COMMAND ${_py} ${_py_dir}/test_launch.py)
  # Scripts that end holding a batch (a loop's last, a tensor of it, Ctrl-C in next()) print
  # nothing; an explicit close while holding one: the batch given back, or BUSY under a tensor.
  ingot_add_test(NAME python.binding.exit LABELS python TIMEOUT 180 ENV ${_py_env}
                 COMMAND ${_py} ${_py_dir}/test_exit.py
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR}/python-exit)
  ingot_add_test(NAME python.binding.mpi LABELS mpi python TIMEOUT 300 ENV ${_py_env}
                 COMMAND ${_py_dir}/run_mpi.sh ${INGOT_MPIRUN} ${MPIEXEC_EXECUTABLE}
                         ${_py} $<TARGET_FILE:ingot-manifest>
                         ${CMAKE_CURRENT_BINARY_DIR}/python-mpi)
  ingot_add_test(NAME python.binding.mpi4py LABELS mpi python TIMEOUT 180 ENV ${_py_env}
                 COMMAND ${_py_dir}/run_mpi.sh ${INGOT_MPIRUN} ${MPIEXEC_EXECUTABLE}
                         ${_py} $<TARGET_FILE:ingot-manifest>
                         ${CMAKE_CURRENT_BINARY_DIR}/python-mpi4py mpi4py)
  # ingot.ImageTransform's decode options (skipped without PyTorch or Pillow; the center crop
  # against torchvision's, which INGOT_TEST_REQUIRE_TORCHVISION requires).
  ingot_add_test(NAME python.binding.vision LABELS python TIMEOUT 180
                 ENV ${_py_env} ${INGOT_TEST_TORCHVISION_ENV}
                 COMMAND ${_py} ${_py_dir}/test_vision.py
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR}/python-vision)
  # GPU batches through DLPack on a consumer stream, byte-identical to host batches (skipped
  # without a CUDA device).
  ingot_add_test(NAME python.binding.gpu LABELS gpu python TIMEOUT 180 ENV ${_py_env}
                 COMMAND ${_py} ${_py_dir}/test_gpu.py
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR}/python-gpu)
  # examples/fashion_mnist_ddp.py: DDP on Fashion-MNIST through the binding, resumed 4 -> 2.
  ingot_add_test(NAME python.example.ddp LABELS mpi python slow TIMEOUT 300 ENV ${_py_env}
                 COMMAND ${_py_dir}/example.sh ${INGOT_MPIRUN} ${MPIEXEC_EXECUTABLE}
                         ${_py} $<TARGET_FILE:ingot-manifest>
                         ${CMAKE_CURRENT_BINARY_DIR}/python-example)
  ingot_add_test(NAME python.install.pip LABELS mpi python slow TIMEOUT 600
                 COMMAND ${_py_dir}/pip_install.sh ${_py} ${PROJECT_SOURCE_DIR}
                         ${CMAKE_CURRENT_BINARY_DIR}/python-venv ${INGOT_MPIRUN}
                         ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ingot-manifest>)
endif()
