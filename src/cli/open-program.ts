// Where commands found it before it moved to the program layer (the analysis uses it too).
export {openProgram, type ModuleFlagValues} from '../program/open-program.js'
