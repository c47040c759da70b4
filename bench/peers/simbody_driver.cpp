// The workloads in Simbody 3.7 (internal coordinates, O(N) recursions).
//
//   simbody_driver WORKLOAD N INTEGRATOR ACCURACY T
//     WORKLOAD    w1 | w2 | w3 | fbc (N windows) | ball (N rods) | tree
//     INTEGRATOR  rkm (RungeKuttaMerson, Simbody's default) | bdf | adams (CPodes)
//     ACCURACY    Integrator::setAccuracy (relative)
//
// W1: MobilizedBody::Pin bodies, each an exact point mass of 1 kg at (1,0,0) of its frame.
// W2: two Slider mobilizers (the second relative to the first) with MobilityLinearSpring.
// W3 and the chain: Pin trees closed by two Constraint::PointInPlane per closing pin.
// ball: MobilizedBody::Ball rods; tree: the torso on a Ball, the rest on Pins whose F and M
// frames turn z onto the hinge axis (bench/peers/spatial.h holds both models' data).
// Prints one line "result key=value ..." (see bench/peers/run.py).
#include <SimTKsimbody.h>

#include "spatial.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace SimTK;

namespace {

struct Model {
  MultibodySystem system;
  SimbodyMatterSubsystem matter{system};
  GeneralForceSubsystem forces{system};
  std::vector<MobilizedBody> links; // w1: the chain; w3/fbc: crank 0 first
};

void build_chain(Model &m, int n) {
  Force::Gravity(m.forces, m.matter, -YAxis, 9.81);
  Body::Rigid point(MassProperties(1, Vec3(1, 0, 0), Inertia(Vec3(1, 0, 0), 1)));
  MobilizedBody parent = m.matter.Ground();
  for (int i = 0; i < n; i++) {
    Vec3 at = i == 0 ? Vec3(0) : Vec3(1, 0, 0);
    MobilizedBody::Pin link(parent, Transform(at), point, Transform());
    m.links.push_back(link);
    parent = link;
  }
}

void build_springs(Model &m) {
  Body::Rigid b1(MassProperties(1, Vec3(0), Inertia(1))),
    b2(MassProperties(2, Vec3(0), Inertia(1)));
  MobilizedBody::Slider s1(m.matter.Ground(), Transform(), b1, Transform());
  MobilizedBody::Slider s2(s1, Transform(), b2, Transform());
  Force::MobilityLinearSpring(m.forces, s1, MobilizerQIndex(0), 100, 0);
  Force::MobilityLinearSpring(m.forces, s2, MobilizerQIndex(0), 50, 0); // on x2 - x1
  m.links = {s1, s2};
}

// Uniform rods of 1 m, 1 kg along their frame's x axis, pinned at their origin.
void build_four_bars(Model &m, int windows) {
  Force::Gravity(m.forces, m.matter, -YAxis, 9.81);
  Body::Rigid rod(MassProperties(1, Vec3(0.5, 0, 0),
                                 Inertia(Vec3(0.5, 0, 0), 1) + Inertia(1.0 / 12 * Vec3(0, 1, 1))));
  std::vector<MobilizedBody::Pin> cranks;
  for (int i = 0; i <= windows; i++)
    cranks.emplace_back(m.matter.Ground(), Transform(Vec3(i, 0, 0)), rod, Transform());
  for (auto &c : cranks) m.links.push_back(c);
  for (int j = 1; j <= windows; j++) {
    MobilizedBody::Pin coupler(cranks[j - 1], Transform(Vec3(1, 0, 0)), rod, Transform());
    m.links.push_back(coupler);
    // the coupler's right end on crank j's tip: x = 1 and y = 0 in crank j's frame
    Constraint::PointInPlane(cranks[j], UnitVec3(XAxis), 1, coupler, Vec3(1, 0, 0));
    Constraint::PointInPlane(cranks[j], UnitVec3(YAxis), 0, coupler, Vec3(1, 0, 0));
  }
}

void build_ball_chain(Model &m, int n) {
  Force::Gravity(m.forces, m.matter, -ZAxis, 9.81);
  double I[3];
  spatial_rod_inertia(I);
  Body::Rigid rod(MassProperties(SPATIAL_ROD_M, Vec3(0), Inertia(I[0], I[1], I[2])));
  MobilizedBody parent = m.matter.Ground();
  for (int i = 0; i < n; i++) {
    Transform at = i == 0 ? Transform() : Transform(Vec3(0, 0, -SPATIAL_ROD_L / 2));
    MobilizedBody::Ball link(parent, at, rod, Transform(Vec3(0, 0, SPATIAL_ROD_L / 2)));
    m.links.push_back(link);
    parent = link;
  }
}

void build_tree(Model &m) {
  Force::Gravity(m.forces, m.matter, -ZAxis, 9.81);
  tree_body b[TREE_BODIES];
  int n = tree_bodies(b);
  for (int k = 0; k < n; k++) {
    double I[3];
    tree_inertia(&b[k], I);
    Body::Rigid body(MassProperties(b[k].m, Vec3(0), Inertia(I[0], I[1], I[2])));
    Vec3 p(b[k].p[0], b[k].p[1], b[k].p[2]), c(b[k].c[0], b[k].c[1], b[k].c[2]);
    if (b[k].parent < 0) {
      // the ball's point is the space origin once tree.lua's shift of -1 m in z is applied
      m.links.push_back(
        MobilizedBody::Ball(m.matter.Ground(), Transform(), body, Transform(p - c)));
      continue;
    }
    const tree_body &pa = b[b[k].parent];
    Vec3 cp(pa.c[0], pa.c[1], pa.c[2]);
    Rotation turn(UnitVec3(b[k].n[0], b[k].n[1], b[k].n[2]), ZAxis); // z onto the axis
    m.links.push_back(MobilizedBody::Pin(m.links[b[k].parent], Transform(turn, p - cp), body,
                                         Transform(turn, p - c)));
  }
}

void initial_state(Model &m, const std::string &w, int windows, State &s) {
  if (w == "ball") {
    double q[4];
    for (std::size_t i = 0; i < m.links.size(); i++) {
      if (i == 0)
        spatial_q1(q);
      else
        spatial_qrel(q);
      m.links[i].setQToFitRotation(s, Rotation(Quaternion(q[0], q[1], q[2], q[3])));
    }
  } else if (w == "tree") {
    // every body at the identity, at rest: the default state
  } else if (w == "w2") {
    m.links[0].setOneQ(s, 0, 0.1);
    m.links[1].setOneQ(s, 0, -0.1); // x2 = 0: the second slider is relative to the first
  } else if (w != "w1") {
    for (int i = 0; i <= windows; i++) {
      m.links[i].setOneQ(s, 0, Pi / 2);
      m.links[i].setOneU(s, 0, -1);
    }
    for (int j = 1; j <= windows; j++) {
      m.links[windows + j].setOneQ(s, 0, -Pi / 2); // level
      m.links[windows + j].setOneU(s, 0, 1);
    }
  }
}

std::unique_ptr<Integrator> make_integrator(const std::string &name, const MultibodySystem &sys) {
  if (name == "rkm") return std::make_unique<RungeKuttaMersonIntegrator>(sys);
  if (name == "bdf") return std::make_unique<CPodesIntegrator>(sys, CPodes::BDF, CPodes::Newton);
  if (name == "adams")
    return std::make_unique<CPodesIntegrator>(sys, CPodes::Adams, CPodes::Functional);
  std::fprintf(stderr, "simbody_driver: unknown integrator %s\n", name.c_str());
  std::exit(2);
}

} // namespace

// Instants at which each driver measures the energy (run.py's DRIFT_SAMPLES).
static const int kDriftSamples = 20;

int main(int argc, char **argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: simbody_driver w1|w2|w3|fbc|ball|tree N rkm|bdf|adams ACCURACY T\n");
    return 2;
  }
  std::string w = argv[1];
  int n = std::atoi(argv[2]);
  double accuracy = std::atof(argv[4]), t_end = std::atof(argv[5]);
  Model m;
  if (w == "w1")
    build_chain(m, n);
  else if (w == "w2")
    build_springs(m);
  else if (w == "ball")
    build_ball_chain(m, n);
  else if (w == "tree")
    build_tree(m);
  else
    build_four_bars(m, w == "w3" ? 1 : n);
  int windows = w == "w3" ? 1 : n;
  m.system.realizeTopology();
  State s = m.system.getDefaultState();
  initial_state(m, w, windows, s);
  m.system.realize(s, Stage::Dynamics);
  double e0 = m.system.calcEnergy(s);

  auto integ = make_integrator(argv[3], m.system);
  integ->setAccuracy(accuracy);
  integ->setConstraintTolerance(accuracy);
  integ->initialize(s);
  double seconds = 0, drift = 0;
  try {
    // The energy at kDriftSamples report times (interpolated: the steps are those of one
    // stepTo(t_end)), outside the timing; its largest departure from E0 is the drift measure.
    for (int k = 1; k <= kDriftSamples; k++) {
      double until = t_end * k / kDriftSamples;
      auto t0 = std::chrono::steady_clock::now();
      Integrator::SuccessfulStepStatus status;
      do {
        status = integ->stepTo(until);
      } while (integ->getTime() < until && status != Integrator::EndOfSimulation);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const State &now = integ->getState();
      m.system.realize(now, Stage::Dynamics);
      drift = std::max(drift, std::fabs(m.system.calcEnergy(now) - e0));
    }
  } catch (const std::exception &ex) {
    // one line for the runner: the case failed, with Simbody's reason
    std::string why = ex.what();
    for (char &c : why)
      if (c == '\n') c = ' ';
    std::printf("result failed=1 t=%.6g reason=%s\n", integ->getTime(), why.c_str());
    return 0;
  }
  const State &e = integ->getState();
  m.system.realize(e, Stage::Dynamics);
  std::printf("result time=%.6g steps=%d rhs=%d e0=%.17g e1=%.17g drift=%.17g", seconds,
              integ->getNumStepsTaken(), integ->getNumRealizations(), e0, m.system.calcEnergy(e),
              drift);
  if (w == "w1") {
    Vec3 tip = m.links.back().findStationLocationInGround(e, Vec3(1, 0, 0));
    std::printf(" tip_x=%.17g tip_y=%.17g", tip[0], tip[1]);
  } else if (w == "ball" || w == "tree") {
    // the last body's centre of mass: the chain's last rod, the tree's right foot
    Vec3 tip = m.links.back().getBodyOriginLocation(e);
    std::printf(" tip_x=%.17g tip_y=%.17g tip_z=%.17g", tip[0], tip[1], tip[2]);
  } else if (w == "w2") {
    double x1 = m.links[0].getOneQ(e, 0);
    std::printf(" x1=%.17g x2=%.17g", x1, x1 + m.links[1].getOneQ(e, 0));
  } else {
    std::printf(" theta=%.17g", m.links[0].getOneQ(e, 0));
  }
  std::printf("\n");
  return 0;
}
