# Installation layout and the .deb (CPack): binaries, desktop entry, icon, reference script,
# and the Debian copyright file (GPL-3.0-or-later: see packaging/copyright and LICENSE).
# `cmake --build build/release --target package` builds depthlab_<version>_amd64.deb.
include(GNUInstallDirs)
install(FILES ${PROJECT_SOURCE_DIR}/resources/depthlab.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/resources/depthlab.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES ${PROJECT_SOURCE_DIR}/bench/reference_model.py ${PROJECT_SOURCE_DIR}/bench/hf_llama_bench.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/depthlab/bench)

install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/depthlab)

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "depthlab")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "DepthLab developers")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Desktop lab for the Curse of Depth in language models")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # depthlab_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bible-kjv, sentencepiece, python3-torch, libopenblas0-openmp")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
include(CPack)
