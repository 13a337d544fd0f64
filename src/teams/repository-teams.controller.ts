import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { toTeamWire } from './team.mapper';
import { TeamWire } from './team.wire';
import { TeamsService } from './teams.service';

/** The teams that reach one repository of an organisation. */
@ApiTags('repository')
@Controller()
export class RepositoryTeamsController {
  constructor(private readonly teams: TeamsService) {}

  @Get('repos/:owner/:repo/teams')
  @Public('repository')
  @RepositoryRoute()
  @ApiOkResponse({ type: [TeamWire], description: 'TeamList' })
  @ApiErrors(401, 404, 405)
  async list(@TargetRepository() target: RepositoryTarget): Promise<TeamWire[]> {
    return (await this.teams.teamsOfRepository(target)).map((team) => toTeamWire(team));
  }

  @Get('repos/:owner/:repo/teams/:team')
  @Public('repository')
  @RepositoryRoute()
  @ApiOkResponse({ type: TeamWire })
  @ApiErrors(401, 404, 405)
  async check(@TargetRepository() target: RepositoryTarget, @Param('team') team: string): Promise<TeamWire> {
    return toTeamWire(await this.teams.teamOfRepository(target, team));
  }

  @Put('repos/:owner/:repo/teams/:team')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(401, 403, 404, 405, 422)
  async add(@TargetRepository() target: RepositoryTarget, @Param('team') team: string): Promise<void> {
    await this.teams.changeRepositoryTeam(target, team, true);
  }

  @Delete('repos/:owner/:repo/teams/:team')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiEmpty()
  @ApiErrors(401, 403, 404, 405, 422)
  async remove(@TargetRepository() target: RepositoryTarget, @Param('team') team: string): Promise<void> {
    await this.teams.changeRepositoryTeam(target, team, false);
  }
}
