// Precompiled header for depthlab_core's torch-using sources: the heavy, stable includes.
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>
