/* components/registry.c — registers the built-in part types, from one list. */
#include "joinery/joinery.h"
#include "parts.h"

static const jyPartType *(*const builtins[])(void) = {
  jy_part_ground,         jy_part_mass,          jy_part_spring,
  jy_part_damper,         jy_part_rod,           jy_part_spring_mass,
  jy_part_pendulum,       jy_part_guide,         jy_part_body2d,
  jy_part_marker2d,       jy_part_slider2d,      jy_part_rotational_spring2d,
  jy_part_torque2d,       jy_part_ground2d,      jy_part_body3d,
  jy_part_marker3d,       jy_part_ground3d,      jy_part_hinge3d,
  jy_part_prismatic3d,    jy_part_weld3d,        jy_part_rotational_spring3d,
  jy_part_torque3d,       jy_part_floor,         jy_part_rope,
  jy_part_contact,        jy_part_surface,       jy_part_pin_motor2d,
  jy_part_slider_motor2d, jy_part_hinge_motor3d, jy_part_prismatic_motor3d,
  jy_part_actuator,       jy_part_pin_angle2d,
};

JY_API jyStatus jy_components_register(jyEnv *env) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
    jyStatus status = jy_env_register(env, builtins[i]());
    if (status != JY_OK) return status;
  }
  return JY_OK;
}
