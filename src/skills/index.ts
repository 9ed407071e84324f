/** Skills (the Agent Skills format): folders of instructions the model reads when they apply (docs/skills.md). */
export { loadSkills, readSkillFile, MAX_SKILL_FILE_BYTES, SKILL_FILE, type LoadedSkills, type Skill } from './load.js';
export { skillToolEntry, withSkillServer, withSkillTool, SKILL_TOOL_NAME, SKILLS_SERVER } from './skill-tool.js';
export { skillCommand, skillInstruction, skillsCommand } from './skill-commands.js';
export { SkillsFolder, type SkillsFolderOptions } from './skills-folder.js';
