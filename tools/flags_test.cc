// ParseFlags against flags defined here as a program defines its own, and
// the --help text and version.
#include "tools/flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

ABSL_FLAG(int64_t, steps, 10, "steps to run");
ABSL_FLAG(double, rate, 0.5, "the learning rate");
ABSL_FLAG(bool, json, false, "print JSON");
ABSL_FLAG(std::string, o, "", "output file");
ABSL_FLAG(std::vector<std::string>, feed, {}, "NAME=JSON");
ABSL_FLAG(std::vector<std::string>, devices, {}, "comma-separated devices");
ABSL_FLAG(std::string, elsewhere, "", "a flag the set below leaves out");
ABSL_FLAG(int32_t, long_help, 0,
          "first line, then a long sentence that goes on and on past the width of a terminal; "
          "and\na line of its own");

namespace towerflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::towerflow::testing::StatusIs;

FlagSet Set() { return {{"steps", "rate", "json", "o", "feed", "devices"}, {&FLAGS_feed}}; }

TEST(ParseFlagsTest, SetsEachFormAndKeepsPositionals) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(
      {"graph.pbtxt", "--steps=3", "-rate", "0.25", "--json", "-o", "out.dot", "more"}, Set());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->positional, ElementsAre("graph.pbtxt", "more"));
  EXPECT_FALSE(parsed->help);
  EXPECT_EQ(absl::GetFlag(FLAGS_steps), 3);
  EXPECT_EQ(absl::GetFlag(FLAGS_rate), 0.25);
  EXPECT_TRUE(absl::GetFlag(FLAGS_json));
  EXPECT_EQ(absl::GetFlag(FLAGS_o), "out.dot");
}

TEST(ParseFlagsTest, RepeatedFlagKeepsEveryValueWithItsCommas) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseFlags({"--feed", "x=[[1,2],[3,4]]", "--feed=y=5", "--devices=/cpu:0,/cpu:1"}, Set());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(absl::GetFlag(FLAGS_feed), ElementsAre("x=[[1,2],[3,4]]", "y=5"));
  // A list flag that is not repeated is Abseil's: split at commas.
  EXPECT_THAT(absl::GetFlag(FLAGS_devices), ElementsAre("/cpu:0", "/cpu:1"));
}

TEST(ParseFlagsTest, EachCallStartsFromTheDefaults) {
  ASSERT_TRUE(ParseFlags({"--steps=3", "--json", "--feed=a=1"}, Set()).ok());
  ASSERT_TRUE(ParseFlags({}, Set()).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_steps), 10);
  EXPECT_FALSE(absl::GetFlag(FLAGS_json));
  EXPECT_TRUE(absl::GetFlag(FLAGS_feed).empty());
}

TEST(ParseFlagsTest, BooleansTakeNoPrefixAndExplicitValues) {
  ASSERT_TRUE(ParseFlags({"--json=true", "--nojson"}, Set()).ok());
  EXPECT_FALSE(absl::GetFlag(FLAGS_json));
  ASSERT_TRUE(ParseFlags({"--json=false", "--json"}, Set()).ok());
  EXPECT_TRUE(absl::GetFlag(FLAGS_json));
  // A bare boolean does not take the next argument as its value.
  absl::StatusOr<ParsedArgs> parsed = ParseFlags({"--json", "false"}, Set());
  ASSERT_TRUE(parsed.ok());
  EXPECT_THAT(parsed->positional, ElementsAre("false"));
  EXPECT_THAT(ParseFlags({"--nojson=1"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "--nojson takes no value"));
  EXPECT_THAT(ParseFlags({"--nosteps"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "unknown flag '--nosteps'"));
}

TEST(ParseFlagsTest, DoubleDashEndsTheFlags) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags({"--steps=2", "--", "--json", "-"}, Set());
  ASSERT_TRUE(parsed.ok());
  EXPECT_THAT(parsed->positional, ElementsAre("--json", "-"));
  EXPECT_FALSE(absl::GetFlag(FLAGS_json));
}

TEST(ParseFlagsTest, HelpIsReportedNotAnError) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags({"run", "-h"}, Set());
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->help);
  EXPECT_TRUE(ParseFlags({"--help"}, Set())->help);
}

TEST(ParseFlagsTest, TyposAreErrorsWithTheNearestName) {
  EXPECT_THAT(ParseFlags({"--stpes=3"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "unknown flag '--stpes=3' (did you mean --steps?)"));
  EXPECT_THAT(ParseFlags({"--fed", "x=1"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "did you mean --feed?"));
  // Defined in the program but not taken by this command.
  EXPECT_THAT(ParseFlags({"--elsewhere=x"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "unknown flag '--elsewhere=x'"));
  absl::Status far = ParseFlags({"--frobnicate"}, Set()).status();
  EXPECT_THAT(far, StatusIs(absl::StatusCode::kInvalidArgument, "unknown flag '--frobnicate'"));
  EXPECT_THAT(std::string(far.message()), ::testing::Not(HasSubstr("did you mean")));
}

TEST(ParseFlagsTest, MissingAndMalformedValuesAreErrors) {
  EXPECT_THAT(ParseFlags({"--steps"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "--steps needs a value"));
  EXPECT_THAT(ParseFlags({"-o", "--json"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "-o needs a value"));
  EXPECT_THAT(ParseFlags({"--steps=many"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "--steps=many: "));
  EXPECT_THAT(ParseFlags({"--rate", "fast"}, Set()),
              StatusIs(absl::StatusCode::kInvalidArgument, "--rate=fast: "));
  // A negative number is a value, not a flag.
  ASSERT_TRUE(ParseFlags({"--steps", "-4"}, Set()).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_steps), -4);
}

TEST(ParseFlagsTest, NameWithoutFlagIsTheProgramsMistake) {
  EXPECT_THAT(ParseFlags({}, FlagSet{{"undefined_flag"}, {}}),
              StatusIs(absl::StatusCode::kInternal, "undefined_flag"));
}

TEST(FlagsHelpTest, ListsEveryFlagWithItsDefault) {
  EXPECT_EQ(FlagsHelp(Set()),
            "  --devices=A,B,... (default: none)\n"
            "      comma-separated devices\n"
            "  --feed=VALUE (repeatable)\n"
            "      NAME=JSON\n"
            "  --json (default: false)\n"
            "      print JSON\n"
            "  -o VALUE (default: \"\")\n"
            "      output file\n"
            "  --rate=NUMBER (default: 0.5)\n"
            "      the learning rate\n"
            "  --steps=INT (default: 10)\n"
            "      steps to run\n");
}

TEST(FlagsHelpTest, WrapsLongHelpAtWords) {
  EXPECT_EQ(FlagsHelp({{"long_help"}, {}}),
            "  --long_help=INT (default: 0)\n"
            "      first line, then a long sentence that goes on and on past the width of a\n"
            "      terminal; and\n"
            "      a line of its own\n");
}

TEST(ProgramFlagNamesTest, NamesThisProgramsFlagsAndNotAbseils) {
  EXPECT_THAT(ProgramFlagNames(), ElementsAre("devices", "elsewhere", "feed", "json", "long_help",
                                              "o", "rate", "steps"));
}

TEST(VersionStringTest, NamesVersionAndGraphDefVersion) {
  const std::string version = VersionString();
  EXPECT_THAT(version, ::testing::StartsWith("towerflow 0."));
  EXPECT_THAT(version, HasSubstr("GraphDef version 27"));
  EXPECT_THAT(version, HasSubstr("CUDA: "));
}

}  // namespace
}  // namespace towerflow
