// The `faultline` executable: everything lives in fl_harness; see harness/main.cc.
namespace fl {
int faultline_main(int argc, char** argv);
}
int main(int argc, char** argv) { return fl::faultline_main(argc, argv); }
