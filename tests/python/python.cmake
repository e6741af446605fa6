# The Python binding (python/, docs/python.md), when this build has it (INGOT_PYTHON). The tests
# import the module from the build tree (PYTHONPATH), so CI needs no pip install per run; one
# test checks the pip install path itself. They run INGOT_TEST_PYTHON (tests/CMakeLists.txt) and
# skip (77) when it has no PyTorch.
if(INGOT_HAVE_PYTHON)
  set(_py_env PYTHONPATH=${PROJECT_BINARY_DIR}/python)
  set(_py_dir ${INGOT_TESTS}/python)
  set(_py ${INGOT_TEST_PYTHON})
  ingot_add_test(NAME python.binding.single LABELS python TIMEOUT 180 ENV ${_py_env}
                 COMMAND ${_py} ${_py_dir}/test_single.py
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR}/python-single)
  ingot_add_test(NAME python.binding.mpi LABELS mpi python TIMEOUT 300 ENV ${_py_env}
                 COMMAND ${_py_dir}/run_mpi.sh ${INGOT_MPIRUN} ${MPIEXEC_EXECUTABLE}
                         ${_py} $<TARGET_FILE:ingot-manifest>
                         ${CMAKE_CURRENT_BINARY_DIR}/python-mpi)
  ingot_add_test(NAME python.binding.mpi4py LABELS mpi python TIMEOUT 180 ENV ${_py_env}
                 COMMAND ${_py_dir}/run_mpi.sh ${INGOT_MPIRUN} ${MPIEXEC_EXECUTABLE}
                         ${_py} $<TARGET_FILE:ingot-manifest>
                         ${CMAKE_CURRENT_BINARY_DIR}/python-mpi4py mpi4py)
  # ingot.ImageTransform's decode options (skipped without PyTorch or Pillow).
  ingot_add_test(NAME python.binding.vision LABELS python TIMEOUT 180 ENV ${_py_env}
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
